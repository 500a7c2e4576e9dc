// One entry as the hot tier's log holds it: a fixed header whose numbers the hit path reads in place,
// then the entry's strings and its head and body as bytes. A reader copies a whole record out of the
// shared log (so that a later eviction cannot change what it serves) and reads it through
// RecordEntry, which decodes a field only when it is asked for.
//
//   0  u32 kind (RECORD)                4  u32 slot index (whose record this is)
//   8  f64 logical position             16 f64 record id (unique per node, never reused)
//  24  f64 × 6: requestTimeMs, responseTimeMs, correctedInitialAgeMs, freshnessLifetimeMs,
//      staleWhileRevalidateMs, staleIfErrorMs
//  72  u32 record bytes                 76 u32 key hash
//  80  u16 status, u8 flags, u8 unused
//  84  u32 × 10 lengths: key, variantKey, varyNames, route, etag, lastModified, surrogateControl,
//      tags, head, body
// 124  the ten parts in that order: strings in UTF-8 (lists joined by NUL), the head as the field
//      lines Node writes (`name: value\r\n`, latin1), the body as it came.
import type { CacheEntry } from '../../cache/entry.js';
import { giveBack } from './record-buffers.js';

export const RECORD = 0x52435653; // 'SVCR'

const KIND = 0;
export const SLOT_OF = 4;
export const LOGICAL = 8;
const ID = 16;
const REQUEST_TIME = 24;
const RESPONSE_TIME = 32;
const CORRECTED_AGE = 40;
const FRESHNESS = 48;
const SWR = 56;
const SIE = 64;
export const RECORD_BYTES = 72;
export const KEY_HASH = 76;
const STATUS = 80;
const FLAGS = 82;
const LENGTHS = 84;
export const HEADER_BYTES = 124;

const MUST_REVALIDATE = 1;
const NO_CACHE = 2;
const FORCED_STALE = 4;
const HAS_ETAG = 8;
const HAS_LAST_MODIFIED = 16;
const HAS_SURROGATE_CONTROL = 32;

const PART_KEY = 0;
const PART_VARIANT = 1;
const PART_VARY = 2;
const PART_ROUTE = 3;
const PART_ETAG = 4;
const PART_LAST_MODIFIED = 5;
const PART_SURROGATE_CONTROL = 6;
const PART_TAGS = 7;
const PART_HEAD = 8;
const PART_BODY = 9;
const PARTS = 10;

/** The parts of an entry as they go into a record, measured once. */
export interface EncodedParts {
  readonly strings: readonly string[];
  readonly lengths: readonly number[];
  readonly bytes: number;
}

const SEPARATOR = '\u0000';

/** The field lines of a stored header list, as Node puts them on the wire. */
function headText(headers: readonly string[]): string {
  let text = '';
  for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return text;
}

/** Measures what `encodeRecord` will write for `entry`. */
export function encodedParts(entry: CacheEntry): EncodedParts {
  const strings = [
    entry.key,
    entry.variantKey,
    entry.varyNames.join(SEPARATOR),
    entry.route,
    entry.etag ?? '',
    entry.lastModified ?? '',
    entry.surrogateControl ?? '',
    entry.tags.join(SEPARATOR),
    headText(entry.headers),
  ];
  const lengths = strings.map((text, part) => Buffer.byteLength(text, part === PART_HEAD ? 'latin1' : 'utf8'));
  lengths.push(entry.body.length);
  let bytes = HEADER_BYTES;
  for (const length of lengths) bytes += length;
  return { strings, lengths, bytes };
}

/** Bytes of log a record of `entry` takes: its encoded length, rounded up to the 8-byte unit. */
export function recordSize(entry: CacheEntry): number {
  return alignedBytes(encodedParts(entry).bytes);
}

export function alignedBytes(bytes: number): number {
  return Math.ceil(bytes / 8) * 8;
}

/** Writes `entry` as a record at `offset` of `log`; `parts` is encodedParts(entry). */
export function encodeRecord(log: Buffer, offset: number, entry: CacheEntry, parts: EncodedParts, slot: number, logical: number, id: number, keyHash: number): void {
  log.writeUInt32LE(RECORD, offset + KIND);
  log.writeUInt32LE(slot, offset + SLOT_OF);
  log.writeDoubleLE(logical, offset + LOGICAL);
  log.writeDoubleLE(id, offset + ID);
  log.writeDoubleLE(entry.requestTimeMs, offset + REQUEST_TIME);
  log.writeDoubleLE(entry.responseTimeMs, offset + RESPONSE_TIME);
  log.writeDoubleLE(entry.correctedInitialAgeMs, offset + CORRECTED_AGE);
  log.writeDoubleLE(entry.freshnessLifetimeMs, offset + FRESHNESS);
  log.writeDoubleLE(entry.staleWhileRevalidateMs, offset + SWR);
  log.writeDoubleLE(entry.staleIfErrorMs, offset + SIE);
  log.writeUInt32LE(parts.bytes, offset + RECORD_BYTES);
  log.writeUInt32LE(keyHash >>> 0, offset + KEY_HASH);
  log.writeUInt16LE(entry.status, offset + STATUS);
  log.writeUInt8(
    (entry.mustRevalidate ? MUST_REVALIDATE : 0) |
      (entry.noCache ? NO_CACHE : 0) |
      (entry.forcedStale ? FORCED_STALE : 0) |
      (entry.etag !== undefined ? HAS_ETAG : 0) |
      (entry.lastModified !== undefined ? HAS_LAST_MODIFIED : 0) |
      (entry.surrogateControl !== undefined ? HAS_SURROGATE_CONTROL : 0),
    offset + FLAGS,
  );
  let at = offset + HEADER_BYTES;
  for (let part = 0; part < PARTS; part += 1) {
    const length = parts.lengths[part]!;
    log.writeUInt32LE(length, offset + LENGTHS + part * 4);
    if (part === PART_BODY) entry.body.copy(log, at);
    // Through a view of the field alone: Node's optimised Buffer#write asserts (and ends the
    // process) when the buffer reaches more than 4 GiB past the offset, as a large hot tier's log does.
    else if (length > 0) log.subarray(at, at + length).write(parts.strings[part]!, 0, length, part === PART_HEAD ? 'latin1' : 'utf8');
    at += length;
  }
}

export function recordKind(log: Buffer, offset: number): number {
  return log.readUInt32LE(offset + KIND);
}

export function recordBytes(log: Buffer, offset: number): number {
  return log.readUInt32LE(offset + RECORD_BYTES);
}

/** Where a part begins in a record, and its length. */
function partAt(record: Buffer, base: number, part: number): [number, number] {
  let at = base + HEADER_BYTES;
  for (let i = 0; i < part; i += 1) at += record.readUInt32LE(base + LENGTHS + i * 4);
  return [at, record.readUInt32LE(base + LENGTHS + part * 4)];
}

function text(record: Buffer, base: number, part: number): string {
  const [at, length] = partAt(record, base, part);
  return length === 0 ? '' : record.toString(part === PART_HEAD ? 'latin1' : 'utf8', at, at + length);
}

function list(record: Buffer, base: number, part: number): string[] {
  const joined = text(record, base, part);
  return joined === '' ? [] : joined.split(SEPARATOR);
}

/** Whether the record at `offset` of `log` holds `key` (given as its UTF-8 bytes). */
export function holdsKey(log: Buffer, offset: number, keyBytes: Buffer, keyLength: number): boolean {
  if (log.readUInt32LE(offset + LENGTHS + PART_KEY * 4) !== keyLength) return false;
  const at = offset + HEADER_BYTES;
  return log.compare(keyBytes, 0, keyLength, at, at + keyLength) === 0;
}

/** The variant key of the record at `offset`, decoded (for the writer's variant checks). */
export function variantKeyAt(log: Buffer, offset: number): string {
  return text(log, offset, PART_VARIANT);
}

/** What sweeps read of a stored variant: no body, no header field. */
export function summaryAt(log: Buffer, offset: number): { key: string; variantKey: string; requestTimeMs: number; tags: string[] } {
  return {
    key: text(log, offset, PART_KEY),
    variantKey: text(log, offset, PART_VARIANT),
    requestTimeMs: log.readDoubleLE(offset + REQUEST_TIME),
    tags: list(log, offset, PART_TAGS),
  };
}

/**
 * The header lists of recently read records, by record id: a record read again gives back the same
 * array, so everything keyed by a stored list (the prebuilt head, src/proxy/stored-head.ts) is built
 * once per record rather than once per hit. Bounded; a record's id is never reused, so an entry can
 * never be handed another record's fields.
 */
const HEADERS_MEMO_LIMIT = 4096;
const headersMemo = new Map<number, readonly string[]>();

function memoHeaders(id: number, decode: () => string[]): readonly string[] {
  let headers = headersMemo.get(id);
  if (headers === undefined) {
    headers = decode();
    if (headersMemo.size >= HEADERS_MEMO_LIMIT) headersMemo.delete(headersMemo.keys().next().value!);
    headersMemo.set(id, headers);
  }
  return headers;
}

function parseHead(head: string): string[] {
  const fields: string[] = [];
  let at = 0;
  while (at < head.length) {
    const end = head.indexOf('\r\n', at);
    const colon = head.indexOf(': ', at);
    fields.push(head.slice(at, colon), head.slice(colon + 2, end));
    at = end + 2;
  }
  return fields;
}

/**
 * A stored entry read from a private copy of its record: numbers are read in place, strings decoded
 * on first use, the body a view of the copy.
 */
export class RecordEntry implements CacheEntry {
  #key: string | undefined;
  #variantKey: string | undefined;
  #varyNames: readonly string[] | undefined;
  #tags: readonly string[] | undefined;
  #route: string | undefined;

  /**
   * `record` holds one record from offset 0; `key`, when the reader knows it, spares a decode;
   * `pooled`: its memory is lent by record-buffers.ts, to be given back once the entry is sent.
   */
  constructor(
    private readonly record: Buffer,
    key?: string,
    private readonly pooled = false,
  ) {
    this.#key = key;
  }

  /**
   * Gives the record's memory back for reuse once `response` is done, for a reader that holds the
   * entry no longer than its answer (a plain hit). Nothing else may keep the entry then.
   */
  releaseWhenSent(response: { once(event: 'close', listener: () => void): unknown }): void {
    if (!this.pooled) return;
    response.once('close', () => giveBack(this.record));
  }

  /** The record's id: the same for every read of one stored record, different for any other. */
  get id(): number {
    return this.record.readDoubleLE(ID);
  }

  get key(): string {
    return (this.#key ??= text(this.record, 0, PART_KEY));
  }

  get variantKey(): string {
    return (this.#variantKey ??= text(this.record, 0, PART_VARIANT));
  }

  get varyNames(): readonly string[] {
    return (this.#varyNames ??= list(this.record, 0, PART_VARY));
  }

  get status(): number {
    return this.record.readUInt16LE(STATUS);
  }

  get headers(): readonly string[] {
    return memoHeaders(this.id, () => parseHead(text(this.record, 0, PART_HEAD)));
  }

  get body(): Buffer {
    const [at, length] = partAt(this.record, 0, PART_BODY);
    return this.record.subarray(at, at + length);
  }

  get requestTimeMs(): number {
    return this.record.readDoubleLE(REQUEST_TIME);
  }

  get responseTimeMs(): number {
    return this.record.readDoubleLE(RESPONSE_TIME);
  }

  get correctedInitialAgeMs(): number {
    return this.record.readDoubleLE(CORRECTED_AGE);
  }

  get freshnessLifetimeMs(): number {
    return this.record.readDoubleLE(FRESHNESS);
  }

  get staleWhileRevalidateMs(): number {
    return this.record.readDoubleLE(SWR);
  }

  get staleIfErrorMs(): number {
    return this.record.readDoubleLE(SIE);
  }

  get mustRevalidate(): boolean {
    return (this.record[FLAGS]! & MUST_REVALIDATE) !== 0;
  }

  get noCache(): boolean {
    return (this.record[FLAGS]! & NO_CACHE) !== 0;
  }

  get forcedStale(): boolean {
    return (this.record[FLAGS]! & FORCED_STALE) !== 0;
  }

  get etag(): string | undefined {
    return (this.record[FLAGS]! & HAS_ETAG) !== 0 ? text(this.record, 0, PART_ETAG) : undefined;
  }

  get lastModified(): string | undefined {
    return (this.record[FLAGS]! & HAS_LAST_MODIFIED) !== 0 ? text(this.record, 0, PART_LAST_MODIFIED) : undefined;
  }

  get surrogateControl(): string | undefined {
    return (this.record[FLAGS]! & HAS_SURROGATE_CONTROL) !== 0 ? text(this.record, 0, PART_SURROGATE_CONTROL) : undefined;
  }

  get tags(): readonly string[] {
    return (this.#tags ??= list(this.record, 0, PART_TAGS));
  }

  get route(): string {
    return (this.#route ??= text(this.record, 0, PART_ROUTE));
  }
}
