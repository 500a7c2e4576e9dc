// The door of a client connection: it reads every byte the client sends before Node's parser does,
// and measures each request head exactly as it came: bytes from the first of the request line to the
// CRLF of the empty line that ends the head, and field lines. Node's `maxHeaderSize` counts only the
// target, names and values (not the whitespace around values, the separators or the line ends), so
// 2,000 short fields pass a 16 KiB limit there; and its parser takes request lines RFC 9112 refuses
// (request-line.ts). Bodies are skipped by their framing (message-framing.ts), so the next head is
// found where the parser finds it.

import { judgeRequestLine } from './request-line.js';
import { afterMessageOf, bodyFramingOf, connectionOptionsOf, type AfterMessage, type FramingFields } from './message-framing.js';

export interface HeadLimits {
  /** Most bytes of a head, request line and final CRLF included; 431 beyond. */
  readonly maxHeaderBytes: number;
  /** Most field lines in a head; 431 beyond. */
  readonly maxHeaderFields: number;
}

/** A head the door refuses; the connection is answered and closed, and nothing after it is read. */
export interface HeadRefusal {
  readonly status: 400 | 431 | 501 | 505;
  readonly reason: 'header_too_large' | 'too_many_header_fields' | 'invalid_request_line' | 'version_not_supported' | 'unsupported_transfer_coding';
  /** Method and target of the refused head, when its request line was read. */
  readonly method: string | undefined;
  readonly target: string | undefined;
  /** Where the refused head begins in the bytes just read; 0 when it began in earlier ones. */
  readonly startsAt: number;
}

/** A head the door let through, as Node's parser is to report it. */
export interface AdmittedHead {
  readonly method: string;
  readonly target: string;
}

const CR = 0x0d;
const LF = 0x0a;
const SEMICOLON = 0x3b;
/** Hex digits of a chunk size beyond which the door stops: 2^48 bytes is no chunk anyone sends. */
const MAX_CHUNK_SIZE_DIGITS = 12;

type State =
  /** Before a head: the CR and LF bytes the parser skips there (RFC 9112 §2.2). */
  | 'between'
  | 'head'
  | 'body'
  | 'chunk-size'
  | 'chunk-data'
  /** The CRLF after a chunk's data. */
  | 'chunk-end'
  | 'trailers'
  /** Nothing more is read: a refusal, a CONNECT, a closing message, or framing the parser refuses. */
  | 'stopped';

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/** One client connection's heads, read in order; `read` takes each chunk before Node's parser does. */
export class RequestHeadMeter {
  readonly #limits: HeadLimits;
  readonly #admitted: AdmittedHead[] = [];
  #state: State = 'between';

  // The head being read.
  #startsAt = 0;
  #headBytes = 0;
  #fields = 0;
  /** The start of a line that continues in a later chunk; at most the head's byte limit. */
  #partialLine = '';
  #method = '';
  #target = '';
  #version: '1.0' | '1.1' = '1.1';
  readonly #framing: FramingFields = { contentLength: undefined, transferEncoding: undefined, connection: 0, upgrade: false };

  // The body being skipped, and what follows it.
  #after: AfterMessage = 'next';
  #remaining = 0;
  #chunkSize = 0;
  #chunkDigits = 0;
  #chunkExtension = false;
  #sawCR = false;
  #lineBytes = 0;

  constructor(limits: HeadLimits) {
    this.#limits = limits;
  }

  /**
   * Reads the next bytes of the connection: every head that ends in them and is let through is queued
   * for `nextAdmitted`; the first refused one is returned, and nothing is read after it.
   */
  read(chunk: Buffer): HeadRefusal | undefined {
    let at = 0;
    this.#startsAt = 0;
    while (at < chunk.length) {
      switch (this.#state) {
        case 'between':
          if (chunk[at] === CR || chunk[at] === LF) at++;
          else this.#startHead(at);
          break;
        case 'head': {
          const read = this.#readHead(chunk, at);
          if (typeof read !== 'number') return read;
          at = read;
          break;
        }
        case 'body':
          at = this.#skipBody(chunk, at);
          break;
        case 'chunk-size':
          at = this.#readChunkSize(chunk, at);
          break;
        case 'chunk-data':
          at = this.#skipChunkData(chunk, at);
          break;
        case 'chunk-end':
          at = this.#readChunkEnd(chunk, at);
          break;
        case 'trailers':
          at = this.#readTrailers(chunk, at);
          break;
        case 'stopped':
          return undefined;
      }
    }
    return undefined;
  }

  /** The oldest head let through that Node's parser has not reported yet. */
  nextAdmitted(): AdmittedHead | undefined {
    return this.#admitted.shift();
  }

  #startHead(at: number): void {
    this.#state = 'head';
    this.#startsAt = at;
    this.#headBytes = 0;
    this.#fields = 0;
    this.#method = '';
    const framing = this.#framing;
    framing.contentLength = undefined;
    framing.transferEncoding = undefined;
    framing.connection = 0;
    framing.upgrade = false;
  }

  /**
   * Reads head lines from `at`; the position after them, or the refusal. The bytes that may still
   * belong to the head (never more than its limit allows) are taken as one latin1 string, one
   * character a byte, where lines are found by string search: measured cheaper than a native search
   * per line or a loop over the bytes.
   */
  #readHead(chunk: Buffer, at: number): number | HeadRefusal {
    const text = chunk.toString('latin1', at, Math.min(chunk.length, at + this.#limits.maxHeaderBytes - this.#headBytes + 1));
    let position = 0;
    while (position < text.length) {
      const lf = text.indexOf('\n', position);
      const end = lf < 0 ? text.length : lf + 1;
      this.#headBytes += end - position;
      if (this.#headBytes > this.#limits.maxHeaderBytes) return this.#refuse(431, 'header_too_large');
      if (lf < 0) {
        this.#partialLine += text.slice(position);
        return at + text.length;
      }
      let line = text;
      let lineStart = position;
      let lineEnd = lf;
      if (this.#partialLine !== '') {
        line = this.#partialLine + text.slice(position, lf);
        this.#partialLine = '';
        lineStart = 0;
        lineEnd = line.length;
      }
      position = end;
      // A bare LF: the parser refuses it as framing (smuggling), and is left to.
      if (lineEnd === lineStart || line.charCodeAt(lineEnd - 1) !== CR) return this.#stop(at + position);
      const verdict = this.#line(line, lineStart, lineEnd - 1);
      if (verdict === 'end') return this.#endHead(chunk, at + position);
      if (verdict !== undefined) return verdict;
    }
    return at + position;
  }

  /** One head line without its CRLF: the request line, a field, or the empty line that ends the head. */
  #line(line: string, start: number, end: number): HeadRefusal | 'end' | undefined {
    if (this.#method === '') {
      const verdict = judgeRequestLine(line.slice(start, end));
      if (!verdict.ok) return this.#refuse(verdict.status, verdict.reason, verdict.method, verdict.target);
      this.#method = verdict.method;
      this.#target = verdict.target;
      this.#version = verdict.version;
      return undefined;
    }
    if (end === start) return 'end';
    if (++this.#fields > this.#limits.maxHeaderFields) return this.#refuse(431, 'too_many_header_fields');
    this.#noteField(line, start, end);
    return undefined;
  }

  /** Keeps the fields that decide the framing; only names of their lengths are compared. */
  #noteField(line: string, start: number, end: number): void {
    // c(onnection, ontent-length), t(ransfer-encoding), u(pgrade), in either case: most names are none.
    const first = line.charCodeAt(start) | 0x20;
    if (first !== 0x63 && first !== 0x74 && first !== 0x75) return;
    const colon = line.indexOf(':', start);
    if (colon < 0 || colon >= end) return;
    const length = colon - start;
    if (length !== 7 && length !== 10 && length !== 14 && length !== 17) return;
    const name = line.slice(start, colon).toLowerCase();
    const framing = this.#framing;
    if (name === 'upgrade') framing.upgrade = true;
    else if (name === 'connection') framing.connection |= connectionOptionsOf(line.slice(colon + 1, end).trim());
    else if (name === 'content-length') (framing.contentLength ??= []).push(line.slice(colon + 1, end).trim());
    else if (name === 'transfer-encoding') (framing.transferEncoding ??= []).push(line.slice(colon + 1, end).trim());
  }

  /** The head ended at `at`: let through (or refused), and its body's framing taken on. */
  #endHead(chunk: Buffer, at: number): number | HeadRefusal {
    // CONNECT is answered by the server's 'connect' listener, which closes the connection.
    if (this.#method === 'CONNECT') return this.#stop(at);
    const framing = bodyFramingOf(this.#framing);
    if (framing.body === 'unsupported_coding') return this.#refuse(501, 'unsupported_transfer_coding');
    if (framing.body === 'refused_by_parser') return this.#stop(at);
    this.#admitted.push({ method: this.#method, target: this.#target });
    this.#after = afterMessageOf(this.#version, this.#framing);
    if (framing.body === 'chunked') {
      this.#startChunk();
      return at;
    }
    this.#remaining = framing.body === 'length' ? framing.bytes : 0;
    if (this.#remaining === 0) return this.#endMessage(chunk, at);
    this.#state = 'body';
    return at;
  }

  #skipBody(chunk: Buffer, at: number): number {
    const taken = Math.min(this.#remaining, chunk.length - at);
    this.#remaining -= taken;
    return this.#remaining === 0 ? this.#endMessage(chunk, at + taken) : at + taken;
  }

  #startChunk(): void {
    this.#state = 'chunk-size';
    this.#chunkSize = 0;
    this.#chunkDigits = 0;
    this.#chunkExtension = false;
    this.#sawCR = false;
  }

  /** `chunk-size [ chunk-ext ] CRLF` (RFC 9112 §7.1), byte by byte: the line is short. */
  #readChunkSize(chunk: Buffer, at: number): number {
    while (at < chunk.length) {
      const byte = chunk[at++]!;
      if (this.#sawCR) {
        if (byte !== LF || this.#chunkDigits === 0) return this.#stop(at);
        if (this.#chunkSize === 0) {
          this.#state = 'trailers';
          this.#lineBytes = 0;
          this.#sawCR = false;
        } else {
          this.#state = 'chunk-data';
          this.#remaining = this.#chunkSize;
        }
        return at;
      }
      if (byte === CR) {
        this.#sawCR = true;
      } else if (this.#chunkExtension) {
        // The extension's bytes are the parser's to check (and to bound).
      } else if (byte === SEMICOLON && this.#chunkDigits > 0) {
        this.#chunkExtension = true;
      } else {
        const digit = hexValue(byte);
        if (digit < 0 || ++this.#chunkDigits > MAX_CHUNK_SIZE_DIGITS) return this.#stop(at);
        this.#chunkSize = this.#chunkSize * 16 + digit;
      }
    }
    return at;
  }

  #skipChunkData(chunk: Buffer, at: number): number {
    const taken = Math.min(this.#remaining, chunk.length - at);
    this.#remaining -= taken;
    if (this.#remaining === 0) {
      this.#state = 'chunk-end';
      this.#sawCR = false;
    }
    return at + taken;
  }

  #readChunkEnd(chunk: Buffer, at: number): number {
    const byte = chunk[at++];
    if (!this.#sawCR && byte === CR) this.#sawCR = true;
    else if (this.#sawCR && byte === LF) this.#startChunk();
    else return this.#stop(at);
    return at;
  }

  /** Trailer lines up to the empty one; only where they end matters here. */
  #readTrailers(chunk: Buffer, at: number): number {
    while (at < chunk.length) {
      const lf = chunk.indexOf(LF, at);
      if (lf < 0) {
        this.#lineBytes += chunk.length - at;
        this.#sawCR = chunk[chunk.length - 1] === CR;
        return chunk.length;
      }
      this.#lineBytes += lf - at;
      const crBefore = lf > at ? chunk[lf - 1] === CR : this.#sawCR;
      at = lf + 1;
      // A bare LF: the parser refuses it, and is left to.
      if (!crBefore) return this.#stop(at);
      // A CR alone before the LF: the empty line.
      if (this.#lineBytes === 1) return this.#endMessage(chunk, at);
      this.#lineBytes = 0;
    }
    return at;
  }

  #endMessage(chunk: Buffer, at: number): number {
    if (this.#after === 'close') return this.#stop(at);
    this.#state = 'between';
    return this.#after === 'upgrade' ? chunk.length : at;
  }

  #stop(at: number): number {
    this.#state = 'stopped';
    this.#partialLine = '';
    return at;
  }

  #refuse(status: HeadRefusal['status'], reason: HeadRefusal['reason'], method?: string, target?: string): HeadRefusal {
    this.#stop(0);
    const known = this.#method !== '';
    return {
      status,
      reason,
      method: method ?? (known ? this.#method : undefined),
      target: target ?? (known ? this.#target : undefined),
      startsAt: this.#startsAt,
    };
  }
}
