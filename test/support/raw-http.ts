// Raw HTTP/1.1 over a socket, for tests that must send bytes no client library would (two Host
// lines, obs-fold, a bare LF, a NUL in a field, a request that stops half-way).
import { connect, type Socket } from 'node:net';

export interface RawExchange {
  /** Everything received, as latin1 text. */
  text: string;
  /** The status of the first response, undefined when none arrived. */
  status: number | undefined;
  /** Header fields of the first response, lower-case names; repeated ones joined with ", ". */
  headers: Record<string, string>;
  /** The first response's body (by Content-Length; everything after the head otherwise). */
  body: string;
  /** True when the server closed the connection before `waitMs` passed. */
  closed: boolean;
}

export interface RawOptions {
  /** Longest wait for the server to answer and close (default 2 s). */
  waitMs?: number;
  /** Further writes, each after a delay from the previous one. */
  then?: { afterMs: number; bytes: string | Buffer }[];
  /** Stop waiting as soon as one complete response arrived (keep-alive answers do not close). */
  untilResponse?: boolean;
  /** Stop waiting as soon as the head of a final response arrived (a HEAD's answer has no body). */
  untilHead?: boolean;
  /** Stop waiting once this many final responses arrived whole (pipelined requests' answers). */
  untilAnswers?: number;
  /** Connect from this local address (another loopback address is another client). */
  localAddress?: string;
  /** End the sending side after the bytes: the server sees the end of the stream at once. */
  halfClose?: boolean;
}

function parse(text: string, closed: boolean): RawExchange {
  const headEnd = text.indexOf('\r\n\r\n');
  const statusMatch = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  const headers: Record<string, string> = {};
  // An interim 100 Continue precedes the final answer: skip to the last status line before the body.
  let head = headEnd < 0 ? text : text.slice(0, headEnd);
  let rest = headEnd < 0 ? '' : text.slice(headEnd + 4);
  let status = statusMatch ? Number(statusMatch[1]) : undefined;
  while (status === 100) {
    const next = rest.indexOf('\r\n\r\n');
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(rest);
    if (!match || next < 0) break;
    status = Number(match[1]);
    head = rest.slice(0, next);
    rest = rest.slice(next + 4);
  }
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  return { text, status, headers, body: length === undefined ? rest : rest.slice(0, length), closed };
}

function completeResponse(text: string): boolean {
  const parsed = parse(text, false);
  if (parsed.status === undefined || parsed.status === 100) return false;
  const headEnd = text.lastIndexOf('\r\n\r\n');
  if (headEnd < 0) return false;
  const length = parsed.headers['content-length'];
  return length !== undefined && Buffer.byteLength(parsed.body, 'latin1') >= Number(length);
}

/** How many final responses arrived whole, one after another (by Content-Length, or a chunked body's last chunk). */
function completeAnswers(text: string): number {
  let count = 0;
  let at = 0;
  for (;;) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd < 0) return count;
    const head = text.slice(at, headEnd);
    let end = headEnd + 4;
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (length) end += Number(length[1]);
    else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const last = text.indexOf('\r\n0\r\n\r\n', headEnd);
      if (last < 0) return count;
      end = last + 7;
    }
    if (end > text.length) return count;
    if (!/^HTTP\/1\.[01] 1\d\d/.test(head)) count++;
    at = end;
  }
}

function finalHead(text: string): boolean {
  const parsed = parse(text, false);
  return parsed.status !== undefined && parsed.status !== 100 && text.includes('\r\n\r\n');
}

/** Opens a connection to `url` (`http://host:port`), writes `bytes`, and reads until close or `waitMs`. */
export function sendRaw(url: string, bytes: string | Buffer, options: RawOptions = {}): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  const waitMs = options.waitMs ?? 2_000;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const socket: Socket = connect({ port: Number(port), host: hostname.replace(/^\[|\]$/g, ''), ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(Buffer.concat(chunks).toString('latin1'), closed));
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('connect', () => {
      const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
      if (options.halfClose) socket.end(data);
      else socket.write(data);
      // The behaviour a test asks for: a client that sends the rest of its bytes late.
      let delay = 0;
      for (const step of options.then ?? []) {
        delay += step.afterMs;
        setTimeout(() => {
          if (!socket.destroyed) socket.write(typeof step.bytes === 'string' ? Buffer.from(step.bytes, 'latin1') : step.bytes);
        }, delay);
      }
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('latin1');
      if (options.untilResponse && completeResponse(text)) finish(false);
      if (options.untilHead && finalHead(text)) finish(false);
      if (options.untilAnswers !== undefined && completeAnswers(text) >= options.untilAnswers) finish(false);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
  });
}

/** A GET request's bytes with the given extra header lines (CRLF-terminated by this function). */
export function rawGet(path: string, lines: string[]): string {
  return `GET ${path} HTTP/1.1\r\n${lines.map((line) => `${line}\r\n`).join('')}\r\n`;
}
