// The request line as RFC 9112 §3 writes it: method SP request-target SP HTTP-version, one space
// each and nothing around them. Node's parser (llhttp) also takes several spaces between the parts,
// a line with no version (as HTTP/0.9) and any `HTTP/d.d`, and reports each like a well-formed line
// (`GET  /` as `GET /`, `GET /x` as version 0.9), so the shape is judged here on the bytes as they came.
// The characters of the method and the target stay the parser's to check.

export type RequestLineVerdict =
  | { readonly ok: true; readonly method: string; readonly target: string; readonly version: '1.0' | '1.1' }
  | {
      readonly ok: false;
      /** 505 for a well-formed version svc does not speak (RFC 9110 §15.6.6), 400 for any other shape. */
      readonly status: 400 | 505;
      readonly reason: 'invalid_request_line' | 'version_not_supported';
      /** The parts the line seems to have, for the log line. */
      readonly method: string | undefined;
      readonly target: string | undefined;
    };

/** RFC 9112 §2.3: `HTTP-version = HTTP-name "/" DIGIT "." DIGIT`. */
const VERSION = /^HTTP\/\d\.\d$/;

/** Judges one request line, given without its CRLF (latin1, byte for byte). */
export function judgeRequestLine(line: string): RequestLineVerdict {
  const first = line.indexOf(' ');
  const last = line.lastIndexOf(' ');
  const method = first < 0 ? line : line.slice(0, first);
  if (first <= 0 || last === first) {
    // No space, or one: no version at all.
    return { ok: false, status: 400, reason: 'invalid_request_line', method, target: first < 0 ? undefined : line.slice(first + 1) };
  }
  const target = line.slice(first + 1, last);
  const version = line.slice(last + 1);
  // An empty part or a space inside the target: two spaces somewhere, or one at either end.
  if (target === '' || version === '' || target.includes(' ')) return { ok: false, status: 400, reason: 'invalid_request_line', method, target };
  if (version === 'HTTP/1.1') return { ok: true, method, target, version: '1.1' };
  if (version === 'HTTP/1.0') return { ok: true, method, target, version: '1.0' };
  if (VERSION.test(version)) return { ok: false, status: 505, reason: 'version_not_supported', method, target };
  return { ok: false, status: 400, reason: 'invalid_request_line', method, target };
}
