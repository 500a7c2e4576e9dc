// The warm tier's on-disk layout. Two kinds of record, both framed the same way:
//
//   [0, 4)   CRC-32 (big-endian) of every byte from offset 4 to the end
//   [4, 6)   schema version (big-endian u16), WARM_SCHEMA_VERSION when written
//   [6, …)   payload
//
// An entry record's payload is a u32 metadata length, the metadata as a JSON array (positional, so
// no field names are repeated per record) and then the body as raw bytes, never re-encoded. An index
// record's payload is a JSON array [key, variantKey, sizeBytes, lastAccessMs, requestTimeMs, tags]:
// what the store needs to count, evict and touch a variant, and what the invalidation sweeps and ban
// checks read, so that none of them reads a body.
// A recency key is the last access time (u64, big-endian, ms) then the record id, with the entry's
// size as its value (u64, big-endian): the recency table sorts by last access, and eviction reads the
// oldest from its start without decoding an index record to learn what it frees. JSON was measured against msgpackr for
// this metadata: within 30% both ways (about 3 µs per record) and 25% larger, and it needs no
// dependency beyond Node.

import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { CacheEntry } from '../../cache/entry.js';

/**
 * Version of the record layout and of the metadata array's fields. Bump it whenever either changes:
 * a store opened on another version discards its records (see schema.ts).
 * 1: the first layout. 2: keys are built from validated parts and carry the request's scheme (issue 14);
 * a version 1 directory may hold entries stored under keys a crafted Host spelled, so it is not reused.
 * 3: index records carry requestTimeMs and tags (issue 15); a version 2 directory's index records lack
 * them, so it is wiped rather than misread.
 * 4: record ids begin with a hash of the primary key alone (issue 22), so that a data-plane worker
 * finds every variant of a key by one range read, without the index; version 3 ids do not.
 * 5: the recency table and the totals in the meta table (issue 29): the store keeps no index in
 * memory, and a version 4 directory has neither, so it is wiped rather than evicted or counted wrong.
 */
export const WARM_SCHEMA_VERSION = 5;

const FRAME_HEADER_BYTES = 6;
const META_LENGTH_BYTES = 4;

/** Bytes of a record id taken by the hash of the primary key: the prefix every variant of a key shares. */
export const KEY_PREFIX_BYTES = 8;

/**
 * The lmdb key of a variant: 8 bytes of SHA-256 over the primary key, then 8 over the primary and
 * secondary keys. lmdb keys are limited to about 1978 bytes and URLs are not, so keys are hashed; the
 * record holds the full keys and a read checks them. The shared prefix puts the variants of a key
 * side by side, for readers without the index (recordsOfKey); 64 bits per part make an accidental
 * collision of both negligible, and one of the prefix alone costs a record read, never a wrong answer.
 */
export function recordId(key: string, variantKey: string): Buffer {
  const id = Buffer.allocUnsafe(KEY_PREFIX_BYTES * 2);
  keyPrefix(key).copy(id, 0);
  createHash('sha256').update(key).update('\0').update(variantKey).digest().copy(id, KEY_PREFIX_BYTES, 0, KEY_PREFIX_BYTES);
  return id;
}

/** The first bytes of the record id of every variant of `key`. */
export function keyPrefix(key: string): Buffer {
  return createHash('sha256').update(key).digest().subarray(0, KEY_PREFIX_BYTES);
}

/** The lmdb range of the keys that begin with `prefix`. */
export function prefixRange(prefix: Buffer): { start: Buffer; end?: Buffer } {
  // The first key past the prefix is the prefix plus one, as a big-endian number; a prefix of all
  // 0xff has none, and the range runs to the end (the records' key check narrows it).
  const end = Buffer.from(prefix);
  for (let at = end.length - 1; at >= 0; at -= 1) {
    if (end[at] !== 0xff) {
      end[at] = end[at]! + 1;
      return { start: prefix, end };
    }
    end[at] = 0;
  }
  return { start: prefix };
}

const TIME_BYTES = 8;

/** The recency table's key of a variant last used at `lastAccessMs` (times before 1970 sort as 0). */
export function recencyKey(lastAccessMs: number, id: Buffer): Buffer {
  const key = Buffer.allocUnsafe(TIME_BYTES + id.length);
  key.writeBigUInt64BE(BigInt(Math.max(0, Math.trunc(lastAccessMs))), 0);
  id.copy(key, TIME_BYTES);
  return key;
}

/** The last access time a recency key holds. */
export function recencyTimeMs(key: Buffer): number {
  return Number(key.readBigUInt64BE(0));
}

/** The record id a recency key holds, as the write queue's string (one byte per char). */
export function recencyQueueKey(key: Buffer): string {
  return key.toString('latin1', TIME_BYTES);
}

/** The recency table's value: the variant's size, so that eviction knows what it frees. */
export function encodeRecencySize(sizeBytes: number): Buffer {
  const value = Buffer.allocUnsafe(8);
  value.writeBigUInt64BE(BigInt(sizeBytes), 0);
  return value;
}

export function decodeRecencySize(value: Buffer): number {
  return value.length === 8 ? Number(value.readBigUInt64BE(0)) : 0;
}

/** Thrown by the decoders for a record that must not be served; the store deletes it. */
export class CorruptRecordError extends Error {
  override readonly name = 'CorruptRecordError';
  readonly code = 'corrupt_record';
}

/** What an index record holds. */
export interface IndexRecord {
  key: string;
  variantKey: string;
  sizeBytes: number;
  lastAccessMs: number;
  /** The entry's requestTimeMs and tags, copied so that sweeps and ban checks never read the entry. */
  requestTimeMs: number;
  tags: readonly string[];
}

function frame(payloadBytes: number): Buffer {
  const buffer = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payloadBytes);
  buffer.writeUInt16BE(WARM_SCHEMA_VERSION, 4);
  return buffer;
}

function seal(buffer: Buffer): Buffer {
  buffer.writeUInt32BE(crc32(buffer.subarray(4)), 0);
  return buffer;
}

/** Checks length, checksum and version; returns the payload. */
function unframe(buffer: Buffer): Buffer {
  if (buffer.length < FRAME_HEADER_BYTES) throw new CorruptRecordError('record shorter than its frame');
  if (crc32(buffer.subarray(4)) !== buffer.readUInt32BE(0)) throw new CorruptRecordError('checksum mismatch');
  const version = buffer.readUInt16BE(4);
  if (version !== WARM_SCHEMA_VERSION) throw new CorruptRecordError(`record schema version ${version}`);
  return buffer.subarray(FRAME_HEADER_BYTES);
}

export function encodeEntry(entry: CacheEntry): Buffer {
  const meta = Buffer.from(
    JSON.stringify([
      entry.key,
      entry.variantKey,
      entry.varyNames,
      entry.status,
      entry.headers,
      entry.requestTimeMs,
      entry.responseTimeMs,
      entry.correctedInitialAgeMs,
      entry.freshnessLifetimeMs,
      entry.staleWhileRevalidateMs,
      entry.staleIfErrorMs,
      entry.mustRevalidate,
      entry.noCache,
      entry.etag ?? null,
      entry.lastModified ?? null,
      entry.tags,
      entry.forcedStale,
      entry.route,
      entry.surrogateControl ?? null,
    ]),
  );
  const buffer = frame(META_LENGTH_BYTES + meta.length + entry.body.length);
  buffer.writeUInt32BE(meta.length, FRAME_HEADER_BYTES);
  meta.copy(buffer, FRAME_HEADER_BYTES + META_LENGTH_BYTES);
  entry.body.copy(buffer, FRAME_HEADER_BYTES + META_LENGTH_BYTES + meta.length);
  return seal(buffer);
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isOptionalString = (value: unknown): value is string | null => value === null || isString(value);

/**
 * Decodes an entry record; the body is a view of `buffer`, not a copy. Throws CorruptRecordError for
 * anything that is not exactly what encodeEntry wrote.
 */
export function decodeEntry(buffer: Buffer): CacheEntry {
  const payload = unframe(buffer);
  if (payload.length < META_LENGTH_BYTES) throw new CorruptRecordError('entry record without metadata');
  const metaLength = payload.readUInt32BE(0);
  if (META_LENGTH_BYTES + metaLength > payload.length) throw new CorruptRecordError('metadata past the record');
  let meta: unknown;
  try {
    meta = JSON.parse(payload.toString('utf8', META_LENGTH_BYTES, META_LENGTH_BYTES + metaLength));
  } catch (error) {
    throw new CorruptRecordError('metadata is not JSON', { cause: error });
  }
  if (!Array.isArray(meta) || meta.length !== 19) throw new CorruptRecordError('metadata has the wrong shape');
  const [key, variantKey, varyNames, status, headers, requestTimeMs, responseTimeMs, correctedInitialAgeMs] = meta;
  const [freshnessLifetimeMs, staleWhileRevalidateMs, staleIfErrorMs, mustRevalidate, noCache] = meta.slice(8, 13);
  const [etag, lastModified, tags, forcedStale, route, surrogateControl] = meta.slice(13);
  if (
    !isString(key) ||
    !isString(variantKey) ||
    !isStrings(varyNames) ||
    !isNumber(status) ||
    !isStrings(headers) ||
    !isNumber(requestTimeMs) ||
    !isNumber(responseTimeMs) ||
    !isNumber(correctedInitialAgeMs) ||
    !isNumber(freshnessLifetimeMs) ||
    !isNumber(staleWhileRevalidateMs) ||
    !isNumber(staleIfErrorMs) ||
    typeof mustRevalidate !== 'boolean' ||
    typeof noCache !== 'boolean' ||
    !isOptionalString(etag) ||
    !isOptionalString(lastModified) ||
    !isStrings(tags) ||
    typeof forcedStale !== 'boolean' ||
    !isString(route) ||
    !isOptionalString(surrogateControl)
  ) {
    throw new CorruptRecordError('metadata field of the wrong type');
  }
  return {
    key,
    variantKey,
    varyNames,
    status,
    headers,
    body: payload.subarray(META_LENGTH_BYTES + metaLength),
    requestTimeMs,
    responseTimeMs,
    correctedInitialAgeMs,
    freshnessLifetimeMs,
    staleWhileRevalidateMs,
    staleIfErrorMs,
    mustRevalidate,
    noCache,
    etag: etag ?? undefined,
    lastModified: lastModified ?? undefined,
    tags,
    forcedStale,
    route,
    surrogateControl: surrogateControl ?? undefined,
  };
}

export function encodeIndexRecord(record: IndexRecord): Buffer {
  const payload = Buffer.from(
    JSON.stringify([record.key, record.variantKey, record.sizeBytes, record.lastAccessMs, record.requestTimeMs, record.tags]),
  );
  const buffer = frame(payload.length);
  payload.copy(buffer, FRAME_HEADER_BYTES);
  return seal(buffer);
}

export function decodeIndexRecord(buffer: Buffer): IndexRecord {
  const payload = unframe(buffer);
  let fields: unknown;
  try {
    fields = JSON.parse(payload.toString('utf8'));
  } catch (error) {
    throw new CorruptRecordError('index record is not JSON', { cause: error });
  }
  if (!Array.isArray(fields) || fields.length !== 6) throw new CorruptRecordError('index record has the wrong shape');
  const [key, variantKey, sizeBytes, lastAccessMs, requestTimeMs, tags] = fields as unknown[];
  if (
    !isString(key) ||
    !isString(variantKey) ||
    !Number.isSafeInteger(sizeBytes) ||
    (sizeBytes as number) < 0 ||
    !isNumber(lastAccessMs) ||
    !isNumber(requestTimeMs) ||
    !isStrings(tags)
  ) {
    throw new CorruptRecordError('index record field of the wrong type');
  }
  return { key, variantKey, sizeBytes: sizeBytes as number, lastAccessMs, requestTimeMs, tags };
}
