// The warm tier: entries on disk in lmdb, surviving restarts and kill -9. The in-memory index (which
// variants exist, their sizes, last access, fetch times and tags) is rebuilt after open from the small
// index table, never from bodies, and answers the invalidation sweeps without reading the disk. A node
// opens the store and goes on starting while the index is rebuilt (`indexed`); the cache lets the tier
// join once it is (src/cache/warm-join.ts). Reads are synchronous from lmdb's memory map; writes go through a
// bounded queue and reach disk in batched transactions. A record that fails its checksum is deleted
// and never served.

import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { entrySizeBytes, type CacheEntry } from '../../cache/entry.js';
import type { CacheStore, PutOutcome, StoredSummary } from '../cache-store.js';
import { StoreError } from '../errors.js';
import { RecencyIndex, type IndexNode } from '../recency-index.js';
import {
  CorruptRecordError,
  decodeEntry,
  decodeIndexRecord,
  encodeEntry,
  encodeIndexRecord,
  recordId,
} from './record-codec.js';
import { reconcileSchema, type DiscardedSchema } from './schema.js';
import { reconcileCacheMode } from './cache-mode.js';
import { openWarmTables, type WarmTables } from './tables.js';
import { WriteQueue } from './write-queue.js';
import { SyncWatermark } from './sync-watermark.js';

/**
 * A read persists its access time only when the stored one is older than this: recency after a
 * restart is accurate to about a minute, and reads do not turn into a write each.
 */
const ACCESS_PERSIST_INTERVAL_MS = 60_000;

/**
 * The index rebuild lets the event loop turn after this many records, so that probes (`/healthz`,
 * `/readyz`) and the admin listener answer while a large warm tier is indexed: about 10 ms of work.
 */
export const LOAD_CHUNK_RECORDS = 5_000;

export interface WarmStoreOptions {
  /** Directory of the lmdb environment (`warm.path`); created if missing. */
  path: string;
  /** The byte bound (`warm.max_bytes`), counted as entrySizeBytes; lmdb's page overhead is extra. */
  maxBytes: number;
  /** Puts that may wait for disk at once; one more is dropped and counted in droppedWrites. */
  writeQueueLength: number;
  /** Clock for access times and lastSyncMs, ms since the epoch; Date.now unless a test sets it. */
  now?: () => number;
  /** The cluster mode the node runs (`cluster.mode`); records written under another one are wiped. */
  cacheMode?: string | undefined;
}

/** What open did, for the caller to log. */
export interface WarmOpenReport {
  /** Wall time from the open to the end of the index rebuild. */
  durationMs: number;
  /** Entries indexed and servable after open. */
  entryCount: number;
  /** Set when the directory held another schema version: its records were wiped. */
  discardedSchema: DiscardedSchema | undefined;
  /** Set when the directory was filled under another cluster mode: its records were wiped. */
  discardedMode?: string | undefined;
}

export interface WarmStore extends CacheStore {
  readonly tier: 'warm';
  /** Puts dropped because the write queue was full or their write failed (svc_wal_dropped_entries_total). */
  readonly droppedWrites: number;
  /**
   * Every put and delete made before this time is on disk, ms since the epoch: an entry stored at T
   * survives a crash once lastSyncMs ≥ T (svc_wal_last_sync_timestamp_seconds, sync-watermark.ts).
   * The open time until a write reaches disk.
   */
  readonly lastSyncMs: number;
  /** Records that failed their checksum or could not be decoded, deleted unserved
   * (svc_warm_store_self_heals_total). */
  readonly selfHeals: number;
  /** Reads lmdb failed; each answered as a miss. */
  readonly readErrors: number;
  /** Write batches lmdb failed. */
  readonly writeErrors: number;
  /** Complete once `indexed` resolved. */
  readonly openReport: WarmOpenReport;
  /**
   * Resolves once the index is rebuilt and the store answers for every record on disk; rejects when
   * the rebuild failed or the store was closed first. Until then lookups, puts and deletes see only
   * what is indexed so far: the cache keeps the tier out until then (see warm-join.ts).
   */
  readonly indexed: Promise<void>;
  /** Records on disk when the store was opened, before any was indexed: what the node held when it stopped. */
  readonly recordsAtOpen: number;
  /** Marks a variant used as a lookup does, for a lookup made elsewhere (a data-plane worker's read). */
  markUsed(key: string, variantKey: string): void;
  /**
   * Puts and deletes also come from other threads, by message (data-plane workers): `arrived`
   * resolves true once every one they made before the call has reached this store, false when it
   * cannot tell. lastSyncMs counts them only then.
   */
  setRemoteWriters(arrived: () => Promise<boolean>): void;
  /**
   * Frees the reader slots of processes that died while reading the store (a worker killed with -9):
   * lmdb keeps the pages such a reader saw until then. Returns how many were freed.
   */
  releaseStaleReaders(): number;
}

/** Tags of the many entries that have none: one shared array rather than one per slot. */
const NO_TAGS: readonly string[] = Object.freeze([]);

/** One stored variant in the in-memory index; it is its own summary for the invalidation sweeps. */
class WarmSlot implements IndexNode, StoredSummary {
  newer: WarmSlot | null = null;
  older: WarmSlot | null = null;
  readonly tags: readonly string[];

  constructor(
    readonly key: string,
    readonly variantKey: string,
    public sizeBytes: number,
    /** Last use, ms since the epoch. */
    public lastAccessMs: number,
    /** The access time the index table holds. */
    public persistedAccessMs: number,
    readonly requestTimeMs: number,
    tags: readonly string[],
  ) {
    this.tags = tags.length === 0 ? NO_TAGS : tags;
  }
}

// Puts and touches carry the size as it was when enqueued: a batch is encoded later, by which time
// the slot may have been removed (its size is then -1) with the delete following in the next batch.
type WarmOp =
  | { readonly kind: 'put'; readonly slot: WarmSlot; readonly sizeBytes: number; readonly entry: CacheEntry }
  | { readonly kind: 'touch'; readonly slot: WarmSlot; readonly sizeBytes: number }
  | { readonly kind: 'delete' };

/** The write queue's key for a record id: 16 bytes as a one-byte-per-char string. */
function queueKey(key: string, variantKey: string): string {
  return recordId(key, variantKey).toString('latin1');
}

class LmdbCacheStore implements WarmStore {
  readonly tier = 'warm';
  readonly #tables: WarmTables;
  readonly #index = new RecencyIndex<WarmSlot>();
  readonly #queue: WriteQueue<WarmOp>;
  readonly #maxBytes: number;
  readonly #writeQueueLength: number;
  readonly #now: () => number;
  #droppedWrites = 0;
  readonly #synced: SyncWatermark;
  #selfHeals = 0;
  #readErrors = 0;
  #writeErrors = 0;
  #closed = false;
  #openReport: WarmOpenReport | undefined;
  #indexed: Promise<void> = Promise.resolve();
  readonly recordsAtOpen: number;

  constructor(tables: WarmTables, options: WarmStoreOptions) {
    this.#tables = tables;
    this.recordsAtOpen = (tables.index.getStats() as { entryCount: number }).entryCount;
    this.#maxBytes = options.maxBytes;
    this.#writeQueueLength = options.writeQueueLength;
    this.#now = options.now ?? Date.now;
    this.#queue = new WriteQueue<WarmOp>({
      maxPuts: options.writeQueueLength,
      commit: (batch) => this.#commit(batch),
      onFailed: (batch) => this.#failed(batch),
    });
    this.#synced = new SyncWatermark(this.#now, () => this.#queue.settled());
  }

  get entryCount(): number {
    return this.#index.entryCount;
  }

  get byteCount(): number {
    return this.#index.byteCount;
  }

  get droppedWrites(): number {
    return this.#droppedWrites;
  }

  get lastSyncMs(): number {
    return this.#synced.ms;
  }

  setRemoteWriters(arrived: () => Promise<boolean>): void {
    this.#synced.setRemoteWriters(arrived);
  }

  get selfHeals(): number {
    return this.#selfHeals;
  }

  get readErrors(): number {
    return this.#readErrors;
  }

  get writeErrors(): number {
    return this.#writeErrors;
  }

  get indexed(): Promise<void> {
    return this.#indexed;
  }

  /** Starts the index rebuild in the background; called once, right after construction. */
  beginIndexing(startedMs: number, discardedSchema: DiscardedSchema | undefined, discardedMode: string | undefined): void {
    this.#indexed = this.#load(startedMs, discardedSchema, discardedMode);
    // Seen by whoever awaits `indexed`; an unobserved failure must not end the process.
    this.#indexed.catch(() => undefined);
  }

  get openReport(): WarmOpenReport {
    return this.#openReport ?? { durationMs: 0, entryCount: 0, discardedSchema: undefined };
  }

  /**
   * Rebuilds the recency index from the index table: the startup "log replay" phase. Bodies are not
   * read; a record's checksum is checked when it is first read.
   */
  async #load(startedMs: number, discardedSchema: DiscardedSchema | undefined, discardedMode: string | undefined): Promise<void> {
    const found: WarmSlot[] = [];
    const corrupt: Buffer[] = [];
    let read = 0;
    for (const { key: id, value } of this.#tables.index.getRange()) {
      if (++read % LOAD_CHUNK_RECORDS === 0) {
        await yieldToEventLoop();
        this.#assertOpen();
      }
      try {
        const record = decodeIndexRecord(value);
        const { key, variantKey, sizeBytes, lastAccessMs, requestTimeMs, tags } = record;
        found.push(new WarmSlot(key, variantKey, sizeBytes, lastAccessMs, lastAccessMs, requestTimeMs, tags));
      } catch (error) {
        if (!(error instanceof CorruptRecordError)) throw error;
        corrupt.push(id);
      }
    }
    if (corrupt.length > 0) {
      this.#selfHeals += corrupt.length;
      await this.#tables.env.transaction(() => {
        for (const id of corrupt) {
          this.#tables.records.remove(id);
          this.#tables.index.remove(id);
        }
      });
    }
    // Least recently used first, so the most recently used ends at the head of the list.
    const ordered = await oldestFirst(found);
    this.#assertOpen();
    for (const [i, slot] of ordered.entries()) {
      if (i % LOAD_CHUNK_RECORDS === LOAD_CHUNK_RECORDS - 1) {
        await yieldToEventLoop();
        this.#assertOpen();
      }
      // More variants than MAX_VARIANTS can only come from a lowered cap; the oldest are kept.
      if (this.#index.admission(slot.key, slot.variantKey) === 'vary_cap') this.#remove(slot);
      else this.#index.add(slot);
    }
    // A lowered maxBytes takes effect at once.
    this.#evictToFit(undefined);
    this.#openReport = { durationMs: performance.now() - startedMs, entryCount: this.entryCount, discardedSchema, discardedMode };
  }

  /** Ends a rebuild the store was closed under: its reads would reach a closed environment. */
  #assertOpen(): void {
    if (this.#closed) throw new StoreError('closed', 'the warm store was closed while its index was rebuilt');
  }

  variants(key: string): CacheEntry[] {
    return this.#variants(key, true);
  }

  peek(key: string): CacheEntry[] {
    return this.#variants(key, false);
  }

  has(key: string, variantKey: string): boolean {
    // The index holds every accepted put, queued or written; a record found corrupt when read is
    // dropped from it then (see #read).
    return !this.#closed && this.#index.find(key, variantKey) !== undefined;
  }

  #variants(key: string, markUsed: boolean): CacheEntry[] {
    if (this.#closed) return [];
    const slots = this.#index.variantsOf(key);
    const found: CacheEntry[] = [];
    const now = markUsed ? this.#now() : 0;
    for (let i = slots.length - 1; i >= 0; i -= 1) {
      const slot = slots[i] as WarmSlot;
      const entry = this.#read(slot);
      if (entry === undefined) continue;
      found.push(entry);
      if (markUsed) this.#touch(slot, now);
    }
    return found;
  }

  releaseStaleReaders(): number {
    return this.#closed ? 0 : this.#tables.env.readerCheck();
  }

  markUsed(key: string, variantKey: string): void {
    if (this.#closed) return;
    const slot = this.#index.find(key, variantKey);
    if (slot !== undefined) this.#touch(slot, this.#now());
  }

  put(entry: CacheEntry): PutOutcome {
    if (this.#closed) return 'dropped';
    const sizeBytes = entrySizeBytes(entry);
    if (sizeBytes > this.#maxBytes) return 'too_large';
    if (this.#index.admission(entry.key, entry.variantKey) === 'vary_cap') return 'vary_cap';
    const id = queueKey(entry.key, entry.variantKey);
    if (!this.#queue.hasRoomForPut(id)) {
      this.#droppedWrites += 1;
      return 'dropped';
    }
    const now = this.#now();
    const slot = new WarmSlot(entry.key, entry.variantKey, sizeBytes, now, now, entry.requestTimeMs, entry.tags);
    this.#index.add(slot);
    this.#queue.enqueue(id, { kind: 'put', slot, sizeBytes, entry });
    this.#evictToFit(slot);
    return 'stored';
  }

  delete(key: string, variantKey?: string): number {
    if (this.#closed) return 0;
    if (variantKey !== undefined) {
      const slot = this.#index.find(key, variantKey);
      if (slot === undefined) return 0;
      this.#remove(slot);
      return 1;
    }
    const slots = [...this.#index.variantsOf(key)];
    for (const slot of slots) this.#remove(slot);
    return slots.length;
  }

  *entries(): Generator<CacheEntry> {
    for (const slot of this.#index.nodes()) {
      if (this.#closed) return;
      const entry = this.#read(slot);
      if (entry !== undefined) yield entry;
    }
  }

  *summaries(): Generator<StoredSummary> {
    for (const slot of this.#index.nodes()) {
      if (this.#closed) return;
      yield slot;
    }
  }

  flush(): Promise<void> {
    return this.#queue.settled();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // A rebuild under way stops at its next turn, before the environment closes under it.
    await this.indexed.catch(() => undefined);
    await this.#queue.settled();
    this.#synced.stop();
    await this.#tables.env.close();
  }

  /** The entry a slot stands for: the waiting put's, else the record on disk, verified. */
  #read(slot: WarmSlot): CacheEntry | undefined {
    const id = recordId(slot.key, slot.variantKey);
    const pending = this.#queue.pending(id.toString('latin1'));
    if (pending?.kind === 'put') return pending.entry;
    let stored: Buffer | undefined;
    try {
      stored = this.#tables.records.getBinary(id);
    } catch {
      this.#readErrors += 1;
      return undefined;
    }
    // Whatever fails here (a missing record, a bad checksum, a record for another key, a decoder
    // surprise) means the record cannot be trusted: it is deleted, never served.
    try {
      if (stored === undefined) throw new CorruptRecordError('index names a record that is missing');
      const entry = decodeEntry(stored);
      if (entry.key !== slot.key || entry.variantKey !== slot.variantKey) {
        throw new CorruptRecordError('record holds another key');
      }
      return entry;
    } catch {
      this.#selfHeals += 1;
      this.#remove(slot);
      return undefined;
    }
  }

  #touch(slot: WarmSlot, now: number): void {
    slot.lastAccessMs = now;
    this.#index.touch(slot);
    if (now - slot.persistedAccessMs < ACCESS_PERSIST_INTERVAL_MS) return;
    const id = queueKey(slot.key, slot.variantKey);
    // Access times are a hint: skipped when a write for the record already waits (it carries the
    // time) or when the queue is busy.
    if (this.#queue.pending(id) !== undefined || this.#queue.length >= this.#writeQueueLength) return;
    this.#queue.enqueue(id, { kind: 'touch', slot, sizeBytes: slot.sizeBytes });
  }

  /** Drops a slot from the index, and its record and index record from disk. */
  #remove(slot: WarmSlot): void {
    if (slot.sizeBytes >= 0) this.#index.remove(slot);
    this.#queue.enqueue(queueKey(slot.key, slot.variantKey), { kind: 'delete' });
  }

  #evictToFit(keep: WarmSlot | undefined): void {
    while (this.#index.byteCount > this.#maxBytes) {
      const victim = this.#index.oldest();
      if (victim === undefined || victim === keep) return;
      this.#remove(victim);
    }
  }

  async #commit(batch: ReadonlyMap<string, WarmOp>): Promise<void> {
    const { env, records, index } = this.#tables;
    const written: { slot: WarmSlot; lastAccessMs: number }[] = [];
    await env.transaction(() => {
      for (const [queued, op] of batch) {
        const id = Buffer.from(queued, 'latin1');
        if (op.kind === 'delete') {
          records.remove(id);
          index.remove(id);
          continue;
        }
        if (op.kind === 'put') records.put(id, encodeEntry(op.entry));
        const { slot, sizeBytes } = op;
        const { key, variantKey, lastAccessMs, requestTimeMs, tags } = slot;
        index.put(id, encodeIndexRecord({ key, variantKey, sizeBytes, lastAccessMs, requestTimeMs, tags }));
        written.push({ slot, lastAccessMs });
      }
    });
    await env.flushed;
    for (const { slot, lastAccessMs } of written) slot.persistedAccessMs = lastAccessMs;
    // The watermark follows at once rather than at its next step: under load, that keeps it close.
    this.#synced.advance();
  }

  /** A batch that did not commit: its puts are lost (and undone on disk), its deletes retried. */
  #failed(batch: ReadonlyMap<string, WarmOp>): void {
    this.#writeErrors += 1;
    if (this.#closed) return;
    for (const [id, op] of batch) {
      // A newer operation for the record supersedes this one.
      if (this.#queue.pending(id) !== op) continue;
      if (op.kind === 'touch') continue;
      if (op.kind === 'put') {
        this.#droppedWrites += 1;
        if (op.slot.sizeBytes >= 0) this.#index.remove(op.slot);
      }
      // A delete for a failed put too: an older version of the record may be on disk.
      this.#queue.enqueue(id, { kind: 'delete' });
    }
  }
}

/**
 * The slots by last access, oldest first, equal times in the order found (as a stable sort). A sort
 * with a comparator takes about 2 s for 1 M slots, all of it without a turn of the event loop; this
 * packs each slot's time and position into one 64-bit integer and sorts those natively (about 80 ms
 * for 1 M), packing and unpacking in chunks between turns. Times spread over more than the bits
 * left (2^44 ms at 1 M slots, centuries) fall back to the comparator.
 */
async function oldestFirst(slots: WarmSlot[]): Promise<WarmSlot[]> {
  let oldest = Infinity;
  let newest = -Infinity;
  for (const slot of slots) {
    oldest = Math.min(oldest, slot.lastAccessMs);
    newest = Math.max(newest, slot.lastAccessMs);
  }
  const positionBits = Math.max(1, Math.ceil(Math.log2(slots.length + 1)));
  if (slots.length === 0 || !Number.isSafeInteger(newest - oldest) || Math.log2(newest - oldest + 1) > 64 - positionBits) {
    return slots.sort((a, b) => a.lastAccessMs - b.lastAccessMs);
  }
  const shift = BigInt(positionBits);
  const packed = new BigUint64Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    if (i % LOAD_CHUNK_RECORDS === LOAD_CHUNK_RECORDS - 1) await yieldToEventLoop();
    packed[i] = (BigInt(Math.trunc(slots[i]!.lastAccessMs - oldest)) << shift) | BigInt(i);
  }
  packed.sort();
  const mask = (1n << shift) - 1n;
  const ordered: WarmSlot[] = new Array<WarmSlot>(slots.length);
  for (let i = 0; i < packed.length; i++) {
    if (i % LOAD_CHUNK_RECORDS === LOAD_CHUNK_RECORDS - 1) await yieldToEventLoop();
    ordered[i] = slots[Number(packed[i]! & mask)]!;
  }
  return ordered;
}

/**
 * Opens the warm tier at `options.path` and starts rebuilding its recency index from disk (the
 * startup `log_replay` work), without waiting for it: the store's `indexed` says when it is done.
 * Rejects with StoreError `open_failed` when the directory cannot be used.
 */
export async function beginWarmStore(options: WarmStoreOptions): Promise<WarmStore> {
  if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) {
    throw new StoreError('invalid_option', `warm store maxBytes must be a positive integer, got ${options.maxBytes}`);
  }
  if (!Number.isSafeInteger(options.writeQueueLength) || options.writeQueueLength <= 0) {
    throw new StoreError(
      'invalid_option',
      `warm store writeQueueLength must be a positive integer, got ${options.writeQueueLength}`,
    );
  }
  const startedMs = performance.now();
  const tables = openWarmTables(options.path);
  try {
    const discardedSchema = await reconcileSchema(tables);
    const discardedMode = await reconcileCacheMode(tables, options.cacheMode);
    const store = new LmdbCacheStore(tables, options);
    store.beginIndexing(startedMs, discardedSchema, discardedMode);
    return store;
  } catch (error) {
    await tables.env.close();
    throw new StoreError('open_failed', `cannot open the warm store at ${options.path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Opens the warm tier and waits for its index: a store that answers for every record on disk. */
export async function openWarmStore(options: WarmStoreOptions): Promise<WarmStore> {
  const store = await beginWarmStore(options);
  try {
    await store.indexed;
  } catch (error) {
    await store.close();
    throw new StoreError('open_failed', `cannot index the warm store at ${options.path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return store;
}
