// Minimal binary reader and writer for the wire codec: unsigned LEB128 varints, length-prefixed UTF-8
// strings and byte strings. Hand-written rather than JSON because every probe goes through here.
import { MalformedMessageError } from './errors.js';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Strings up to this many bytes (member names, addresses, metadata keys) go through the intern cache. */
const MAX_INTERNED_BYTES = 64;
/** Slots of the intern cache, a power of two: room for the names and addresses of a few thousand members. */
const INTERN_SLOTS = 16_384;
const internCache: (string | undefined)[] = new Array<string | undefined>(INTERN_SLOTS).fill(undefined);

/**
 * The same few thousand names and addresses arrive in every packet. Decoding each afresh costs an
 * allocation, a UTF-8 decode and, at the member-table lookup, a new string hash; returning one interned
 * string per byte sequence makes the lookup hit a string whose hash is already cached. A direct-mapped
 * cache keyed by an FNV-1a hash of the bytes, verified byte by byte, so a collision only costs a decode.
 * ASCII only; anything else (and a miss) returns undefined or decodes and fills the slot.
 */
function internedString(data: Uint8Array, start: number, length: number): string | undefined {
  let hash = 0x811c9dc5;
  for (let i = start; i < start + length; i++) {
    const byte = data[i] as number;
    if (byte > 0x7f) return undefined;
    hash = Math.imul(hash ^ byte, 0x01000193);
  }
  const slot = (hash >>> 0) & (INTERN_SLOTS - 1);
  const cached = internCache[slot];
  if (cached !== undefined && cached.length === length) {
    let same = true;
    for (let i = 0; i < length; i++) {
      if (cached.charCodeAt(i) !== data[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return cached;
  }
  const text = String.fromCharCode.apply(null, Array.from(data.subarray(start, start + length)));
  internCache[slot] = text;
  return text;
}

/** Encoded size of an unsigned varint. */
export function varintBytes(value: number): number {
  let bytes = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    bytes++;
  }
  return bytes;
}

/** Encoded size of a length-prefixed UTF-8 string. */
export function stringBytes(text: string): number {
  const length = isAscii(text) ? text.length : utf8Encoder.encode(text).length;
  return varintBytes(length) + length;
}

/** Appends to a buffer that grows as needed; `finish` copies out exactly the bytes written. */
export class ByteWriter {
  private buffer: Uint8Array;
  position = 0;

  constructor(initialBytes = 256) {
    this.buffer = new Uint8Array(initialBytes);
  }

  reset(): void {
    this.position = 0;
  }

  private reserve(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.position + bytes) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buffer.subarray(0, this.position));
    this.buffer = grown;
  }

  u8(value: number): void {
    this.reserve(1);
    this.buffer[this.position++] = value;
  }

  /** An unsigned integer up to Number.MAX_SAFE_INTEGER. */
  varint(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint out of range: ${value}`);
    this.reserve(8);
    while (value >= 0x80) {
      this.buffer[this.position++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    this.buffer[this.position++] = value;
  }

  string(text: string): void {
    if (isAscii(text)) {
      this.varint(text.length);
      this.reserve(text.length);
      for (let i = 0; i < text.length; i++) this.buffer[this.position++] = text.charCodeAt(i);
      return;
    }
    this.bytes(utf8Encoder.encode(text));
  }

  bytes(data: Uint8Array): void {
    this.varint(data.length);
    this.raw(data);
  }

  raw(data: Uint8Array): void {
    this.reserve(data.length);
    this.buffer.set(data, this.position);
    this.position += data.length;
  }

  finish(): Uint8Array {
    return this.buffer.slice(0, this.position);
  }
}

/** Reads from a byte array; every read checks bounds and throws MalformedMessageError past the end. */
export class ByteReader {
  position: number;

  constructor(
    private readonly data: Uint8Array,
    start = 0,
    private readonly end = data.length,
  ) {
    this.position = start;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  u8(): number {
    if (this.position >= this.end) throw new MalformedMessageError('truncated');
    return this.data[this.position++] as number;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const byte = this.u8();
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (!Number.isSafeInteger(value)) throw new MalformedMessageError('varint too large');
        return value;
      }
      scale *= 128;
    }
    throw new MalformedMessageError('varint too long');
  }

  /** A byte string as a view into the input (no copy). */
  bytes(): Uint8Array {
    const length = this.varint();
    if (length > this.remaining) throw new MalformedMessageError('length past end');
    const view = this.data.subarray(this.position, this.position + length);
    this.position += length;
    return view;
  }

  string(): string {
    const length = this.varint();
    if (length > this.remaining) throw new MalformedMessageError('length past end');
    const start = this.position;
    this.position += length;
    if (length <= MAX_INTERNED_BYTES) {
      const interned = internedString(this.data, start, length);
      if (interned !== undefined) return interned;
    }
    return this.utf8(start, length);
  }

  private utf8(start: number, length: number): string {
    try {
      return utf8Decoder.decode(this.data.subarray(start, start + length));
    } catch (error) {
      throw new MalformedMessageError(`invalid UTF-8 (${(error as Error).message})`);
    }
  }

  /** Moves past `length` bytes. */
  skip(length: number): void {
    if (length > this.remaining) throw new MalformedMessageError('length past end');
    this.position += length;
  }
}
