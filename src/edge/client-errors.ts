// What a listener answers when Node's HTTP parser refuses a request, or a limit stops it before a
// handler sees it (the server's 'clientError' event). Node's own defaults answer 400 for most of
// these; each gets the status RFC 9110 gives its cause, and framing errors are counted as smuggling.

export interface ClientErrorVerdict {
  readonly status: 400 | 408 | 413 | 431;
  /** Stable word for logs and the `reason` label. */
  readonly reason: 'header_too_large' | 'header_timeout' | 'chunk_extensions_too_large' | 'smuggling' | 'malformed';
  /** Counted in `svc_http_smuggling_rejected_total`. */
  readonly smuggling: boolean;
}

/**
 * llhttp errors in the framing of a message: where a field, the header section or the body ends is
 * ambiguous (obs-fold, bare CR or LF, whitespace before a colon, NUL or CR in a value, two
 * Content-Lengths, Content-Length with Transfer-Encoding, a bad chunk). One parser reading them
 * differently from another is how requests are smuggled (RFC 9112 §11.2), so each is refused,
 * counted, and its connection closed.
 */
const FRAMING_ERRORS: ReadonlySet<string> = new Set([
  'HPE_INVALID_HEADER_TOKEN',
  'HPE_LF_EXPECTED',
  'HPE_CR_EXPECTED',
  'HPE_UNEXPECTED_SPACE',
  'HPE_INVALID_VERSION',
  'HPE_STRICT',
  'HPE_UNEXPECTED_CONTENT_LENGTH',
  'HPE_INVALID_CONTENT_LENGTH',
  'HPE_INVALID_TRANSFER_ENCODING',
  'HPE_INVALID_CHUNK_SIZE',
]);

/**
 * The answer to a client error; undefined when the client went away (reset, or end of stream in the
 * middle of a request), which leaves nobody to answer and nothing to report.
 */
export function classifyClientError(code: string | undefined): ClientErrorVerdict | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
    case 'HPE_INVALID_EOF_STATE':
    case 'HPE_CLOSED_CONNECTION':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'header_too_large', smuggling: false };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'header_timeout', smuggling: false };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      // Node answers 413 for this one; it is also a way to hide a chunk boundary.
      return { status: 413, reason: 'chunk_extensions_too_large', smuggling: true };
  }
  if (code !== undefined && FRAMING_ERRORS.has(code)) return { status: 400, reason: 'smuggling', smuggling: true };
  return { status: 400, reason: 'malformed', smuggling: false };
}
