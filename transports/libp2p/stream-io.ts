// Length-prefixed frames over libp2p streams: unsigned LEB128 varints, bounded reads that copy each
// byte once into its final buffer, and writes that wait for the stream to drain (backpressure).
import type { Stream } from '@libp2p/interface';
import { FrameTooLargeError, TruncatedFrameError } from './errors.js';

const EMPTY = new Uint8Array(0);

/** Largest chunk handed to `stream.send` at once, so a large body is written as the peer reads it. */
const WRITE_CHUNK_BYTES = 64 * 1024;

/** Varints longer than this would not fit a safe integer; no frame of ours comes near. */
const MAX_VARINT_BYTES = 7;

export function encodeVarint(value: number): Uint8Array {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Uint8Array.from(bytes);
}

/** A UTF-8 string preceded by its length in bytes. */
export function encodeString(value: string): Uint8Array[] {
  const bytes = new TextEncoder().encode(value);
  return [encodeVarint(bytes.length), bytes];
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Reads frames from the inbound side of a stream. */
export class StreamReader {
  private readonly chunks: AsyncIterator<{ subarray(): Uint8Array }>;
  private buffer: Uint8Array = EMPTY;

  constructor(stream: Stream) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  /** Buffers the next chunk; false at the end of the stream. */
  private async pull(): Promise<boolean> {
    const next = await this.chunks.next();
    if (next.done === true) return false;
    const chunk = next.value.subarray();
    this.buffer = this.buffer.length === 0 ? chunk : concatBytes([this.buffer, chunk]);
    return true;
  }

  async readByte(): Promise<number> {
    if (this.buffer.length === 0 && !(await this.pull())) throw new TruncatedFrameError(1, 0);
    const byte = this.buffer[0] ?? 0;
    this.buffer = this.buffer.subarray(1);
    return byte;
  }

  /** Reads a varint and checks it against `maxValue`, naming `what` in the error. */
  async readLength(what: string, maxValue: number): Promise<number> {
    let value = 0;
    for (let index = 0; index < MAX_VARINT_BYTES; index++) {
      const byte = await this.readByte();
      value += (byte & 0x7f) * 2 ** (7 * index);
      if (byte < 0x80) {
        if (value > maxValue) throw new FrameTooLargeError(what, value, maxValue);
        return value;
      }
    }
    throw new FrameTooLargeError(what, Number.MAX_SAFE_INTEGER, maxValue);
  }

  /** Reads exactly `length` bytes into one buffer. */
  async readBytes(length: number): Promise<Uint8Array> {
    if (this.buffer.length >= length) {
      const out = this.buffer.subarray(0, length);
      this.buffer = this.buffer.subarray(length);
      return out;
    }
    const out = new Uint8Array(length);
    out.set(this.buffer);
    let filled = this.buffer.length;
    this.buffer = EMPTY;
    while (filled < length) {
      const next = await this.chunks.next();
      if (next.done === true) throw new TruncatedFrameError(length, filled);
      const chunk = next.value.subarray();
      const used = Math.min(chunk.length, length - filled);
      out.set(chunk.subarray(0, used), filled);
      filled += used;
      if (used < chunk.length) this.buffer = chunk.subarray(used);
    }
    return out;
  }

  async readString(what: string, maxBytes: number): Promise<string> {
    const length = await this.readLength(what, maxBytes);
    return new TextDecoder().decode(await this.readBytes(length));
  }

  /** Reads everything up to the end of the stream, at most `maxBytes`. */
  async readToEnd(what: string, maxBytes: number): Promise<Uint8Array> {
    while (await this.pull()) {
      if (this.buffer.length > maxBytes) throw new FrameTooLargeError(what, this.buffer.length, maxBytes);
    }
    const out = this.buffer;
    this.buffer = EMPTY;
    return out;
  }
}

/** Writes `parts` in order, waiting for the stream to drain whenever its write buffer is full. */
export async function writeParts(stream: Stream, parts: readonly Uint8Array[], signal: AbortSignal): Promise<void> {
  for (const part of parts) {
    for (let offset = 0; offset < part.length; offset += WRITE_CHUNK_BYTES) {
      if (!stream.send(part.subarray(offset, offset + WRITE_CHUNK_BYTES))) await stream.onDrain({ signal });
    }
  }
}

/** Splits a length-prefixed UTF-8 string off the front of `bytes`; undefined when malformed or over `maxBytes`. */
export function splitString(bytes: Uint8Array, maxBytes: number): { value: string; rest: Uint8Array } | undefined {
  let length = 0;
  for (let index = 0; index < MAX_VARINT_BYTES && index < bytes.length; index++) {
    const byte = bytes[index] ?? 0;
    length += (byte & 0x7f) * 2 ** (7 * index);
    if (byte < 0x80) {
      const start = index + 1;
      if (length > maxBytes || start + length > bytes.length) return undefined;
      return { value: new TextDecoder().decode(bytes.subarray(start, start + length)), rest: bytes.subarray(start + length) };
    }
  }
  return undefined;
}
