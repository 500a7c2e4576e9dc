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
/** Slots of the intern cache, a power of two: a few thousand names and addresses rarely share a slot. */
const INTERN_SLOTS = 65_536;

/**
 * Most distinct strings given an id; past it stringId answers -1 and callers fall back to their maps.
 * Bounds the memory a long-lived process spends on names it saw once (members come and go); one less
 * than 2^16 so a slot of the intern cache holds id + 1 in 16 bits.
 */
const MAX_STRING_IDS = 65_535;
const stringIds = new Map<string, number>();
/** The string of each id, densely: the intern cache's hits read it, so it stays in cache. */
const stringsById: string[] = [];
/** The intern cache: per slot, the id + 1 of the string interned there (0: empty). 128 KiB. */
const internSlots = new Uint16Array(INTERN_SLOTS);

/**
 * A small integer standing for `text` in this process, the same every time (-1 once MAX_STRING_IDS are
 * taken). Member tables index arrays by the id of a member's name, so the decoder's stale-alive check,
 * run for most gossip messages, reads one array slot instead of hashing into a large Map (at 1,000
 * simulated members a Map lookup is mostly cache misses).
 */
export function stringId(text: string): number {
  const known = stringIds.get(text);
  if (known !== undefined) return known;
  if (stringsById.length >= MAX_STRING_IDS) return -1;
  const id = stringsById.length;
  stringIds.set(text, id);
  stringsById.push(text);
  return id;
}

/** The id stringId gave `text`, or -1 if it has none; never assigns one. */
export function knownStringId(text: string): number {
  return stringIds.get(text) ?? -1;
}

/** The string id of the last string internedString returned (-1 when it returned undefined). */
let lastInternedId = -1;

/**
 * The same few thousand names and addresses arrive in every packet. Decoding each afresh costs an
 * allocation, a UTF-8 decode and, at the member-table lookup, a new string hash; returning one interned
 * string per byte sequence makes the lookup hit a string whose hash is already cached. A direct-mapped
 * cache keyed by an FNV-1a hash of the bytes, verified byte by byte, so a collision only costs a decode.
 * Its slots hold string ids (16 bits each, so the table stays small enough to stay in cache), and the
 * strings themselves sit densely by id. ASCII only; anything else returns undefined, and a miss decodes
 * and fills the slot.
 */
function internedString(data: Uint8Array, start: number, length: number): string | undefined {
  let hash = 0x811c9dc5;
  for (let i = start; i < start + length; i++) {
    const byte = data[i] as number;
    if (byte > 0x7f) {
      lastInternedId = -1;
      return undefined;
    }
    hash = Math.imul(hash ^ byte, 0x01000193);
  }
  const slot = (hash >>> 0) & (INTERN_SLOTS - 1);
  const held = internSlots[slot] as number;
  if (held !== 0) {
    const cached = stringsById[held - 1] as string;
    if (cached.length === length) {
      let same = true;
      for (let i = 0; i < length; i++) {
        if (cached.charCodeAt(i) !== data[start + i]) {
          same = false;
          break;
        }
      }
      if (same) {
        lastInternedId = held - 1;
        return cached;
      }
    }
  }
  const decoded = String.fromCharCode.apply(null, Array.from(data.subarray(start, start + length)));
  const id = stringId(decoded);
  lastInternedId = id;
  if (id < 0) return decoded;
  internSlots[slot] = id + 1;
  // The string the id was first given to, so every decode of these bytes returns one string object.
  return stringsById[id] as string;
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

  /** Copies the bytes written into `out` at `offset`, for callers that assemble a larger buffer. */
  copyTo(out: Uint8Array, offset: number): void {
    out.set(this.buffer.subarray(0, this.position), offset);
  }
}

/** Reads from a byte array; every read checks bounds and throws MalformedMessageError past the end. */
export class ByteReader {
  position: number;
  /** The string id (see stringId) of the last string read, or -1 when it has none. */
  lastStringId = -1;
  private data: Uint8Array;
  private end: number;

  constructor(data: Uint8Array, start = 0, end = data.length) {
    this.data = data;
    this.position = start;
    this.end = end;
  }

  /** Aims the reader at bytes [start, end) of `data`, so one reader serves many inputs. */
  reset(data: Uint8Array, start: number, end: number): void {
    this.data = data;
    this.position = start;
    this.end = end;
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
      if (interned !== undefined) {
        this.lastStringId = lastInternedId;
        return interned;
      }
    }
    this.lastStringId = -1;
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
