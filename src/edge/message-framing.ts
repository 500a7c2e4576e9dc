// Where a request's body ends and what comes after it, from its head alone, as Node's parser (llhttp,
// strict) decides it: the door (request-head-meter.ts) must find the next request head exactly where
// the parser does. A head whose framing the parser refuses (two Content-Lengths, one with
// Transfer-Encoding, chunked not last) is left to the parser, which answers it as smuggling.

/** Connection options the parser acts on, as bits (RFC 9112 §9.3, §9.6; RFC 9110 §7.8). */
export const CONNECTION_CLOSE = 1;
export const CONNECTION_KEEP_ALIVE = 2;
export const CONNECTION_UPGRADE = 4;

/** The fields of a head that decide its framing, as sent (values without surrounding whitespace). */
export interface FramingFields {
  contentLength: string[] | undefined;
  transferEncoding: string[] | undefined;
  /** The Connection options of every Connection line, CONNECTION_* bits. */
  connection: number;
  /** An Upgrade field was sent. */
  upgrade: boolean;
}

export type BodyFraming =
  | { readonly body: 'none' }
  | { readonly body: 'length'; readonly bytes: number }
  | { readonly body: 'chunked' }
  /** Codings before chunked (`gzip, chunked`): svc decodes none of them (RFC 9112 §6.1: 501). */
  | { readonly body: 'unsupported_coding' }
  /** Framing the parser refuses itself. */
  | { readonly body: 'refused_by_parser' };

/** What follows a message on its connection. */
export type AfterMessage =
  /** The next request's head. */
  | 'next'
  /** Nothing the parser reads: the message closed the connection (RFC 9112 §9.3). */
  | 'close'
  /**
   * An upgrade svc does not take: Node's parser stops at the end of such a message and does not read
   * the rest of the bytes that arrived with it; it reads the next ones as a new request.
   */
  | 'upgrade';

const DIGITS = /^\d+$/;
const NO_BODY: BodyFraming = { body: 'none' };
const CHUNKED: BodyFraming = { body: 'chunked' };
const UNSUPPORTED_CODING: BodyFraming = { body: 'unsupported_coding' };
const REFUSED_BY_PARSER: BodyFraming = { body: 'refused_by_parser' };

/** The list elements of field values (RFC 9110 §5.6.1), lower-case, empty ones dropped. */
function elements(values: readonly string[]): string[] {
  const found: string[] = [];
  for (const value of values) {
    for (const element of value.split(',')) {
      const trimmed = element.trim().toLowerCase();
      if (trimmed !== '') found.push(trimmed);
    }
  }
  return found;
}

export function bodyFramingOf(fields: FramingFields): BodyFraming {
  const { contentLength, transferEncoding } = fields;
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) return REFUSED_BY_PARSER;
    const codings = elements(transferEncoding);
    // Not ending in chunked, or chunked twice: the length cannot be known (RFC 9112 §6.3), a 400.
    if (codings.at(-1) !== 'chunked' || codings.indexOf('chunked') !== codings.length - 1) return REFUSED_BY_PARSER;
    return codings.length === 1 ? CHUNKED : UNSUPPORTED_CODING;
  }
  if (contentLength === undefined) return NO_BODY;
  const value = contentLength[0]!;
  if (contentLength.length > 1 || !DIGITS.test(value)) return REFUSED_BY_PARSER;
  const bytes = Number(value);
  // Past 2^53 the count is not exact; no such body ends anyway, and the parser is left to it.
  return Number.isSafeInteger(bytes) ? { body: 'length', bytes } : REFUSED_BY_PARSER;
}

/** The CONNECTION_* bits of one Connection field value. */
export function connectionOptionsOf(value: string): number {
  const lower = value.toLowerCase();
  // Most clients send one option: it is compared whole before any list is split.
  if (lower === 'keep-alive') return CONNECTION_KEEP_ALIVE;
  if (lower === 'close') return CONNECTION_CLOSE;
  let options = 0;
  for (const element of elements([lower])) {
    if (element === 'close') options |= CONNECTION_CLOSE;
    else if (element === 'keep-alive') options |= CONNECTION_KEEP_ALIVE;
    else if (element === 'upgrade') options |= CONNECTION_UPGRADE;
  }
  return options;
}

/** llhttp's rules: HTTP/1.1 persists unless `close`, 1.0 only with `keep-alive`; an upgrade needs both fields. */
export function afterMessageOf(version: '1.0' | '1.1', fields: FramingFields): AfterMessage {
  const options = fields.connection;
  if (fields.upgrade && (options & CONNECTION_UPGRADE) !== 0) return 'upgrade';
  if ((options & CONNECTION_CLOSE) !== 0) return 'close';
  return version === '1.1' || (options & CONNECTION_KEEP_ALIVE) !== 0 ? 'next' : 'close';
}
