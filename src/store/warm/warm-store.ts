// The warm tier: entries on disk in lmdb, surviving restarts and kill -9. What the tier knows lives
// in lmdb, not in memory: a record and an index record per variant, the recency table (variants in
// order of last access) and the totals, all four updated in one transaction per batch (tables.ts).
// The variants of a key are one range read over the ids that begin with its hash, eviction reads the
// oldest from the start of the recency table, and the counts are the totals plus what the write queue
// holds. So the store's memory is bounded by its write queue, not by what it holds, and it serves as
// soon as it is open: nothing is rebuilt (docs/decisions.md "Warm tier: the index lives in lmdb").
// Reads are synchronous from lmdb's memory map; writes go through a bounded queue whose waiting
// operations reads see at once, and reach disk in batched transactions. A record that fails its
// checksum is deleted and never served.

import { performance } from 'node:perf_hooks';
import { entrySizeBytes, type CacheEntry } from '../../cache/entry.js';
import { MAX_VARIANTS, type CacheStore, type DemotionTarget, type DurableStore, type PutOutcome, type StoreInspection, type StoredSummary, type SweptStore } from '../cache-store.js';
import { StoreError } from '../errors.js';
import {
  CorruptRecordError,
  decodeEntry,
  decodeIndexRecord,
  decodeRecencySize,
  encodeEntry,
  encodeIndexRecord,
  encodeRecencySize,
  KEY_PREFIX_BYTES,
  keyPrefix,
  prefixRange,
  recencyKey,
  recencyQueueKey,
  recencyTimeMs,
  recordId,
  type IndexRecord,
} from './record-codec.js';
import { reconcileSchema, type DiscardedSchema } from './schema.js';
import { reconcileCacheMode } from './cache-mode.js';
import { openWarmTables, readTotals, writeTotals, type WarmTables } from './tables.js';
import { WriteQueue } from './write-queue.js';
import { SyncWatermark } from './sync-watermark.js';

/**
 * A read persists its access time only when the stored one is older than this: recency is accurate
 * to about a minute, and reads do not turn into a write each.
 */
const ACCESS_PERSIST_INTERVAL_MS = 60_000;

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
  /** Wall time of the open: the environment, the schema and mode checks, the totals read. */
  durationMs: number;
  /** Entries on disk and servable after open. */
  entryCount: number;
  /** Set when the directory held another schema version: its records were wiped. */
  discardedSchema: DiscardedSchema | undefined;
  /** Set when the directory was filled under another cluster mode: its records were wiped. */
  discardedMode?: string | undefined;
}

/** The warm tier as the thread that owns it sees it: every store interface, and its own figures. */
export interface WarmStore extends CacheStore, DemotionTarget, SweptStore, StoreInspection, DurableStore {
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
  readonly openReport: WarmOpenReport;
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

/** A put waiting for disk: readable at once; its last access moves while it waits. */
interface PutOp {
  readonly kind: 'put';
  readonly entry: CacheEntry;
  readonly sizeBytes: number;
  lastAccessMs: number;
  /** Order of the puts, so that the waiting variants of a key come most recently stored first. */
  readonly seq: number;
}

/** A newer access time for a variant on disk. */
interface TouchOp {
  readonly kind: 'touch';
  lastAccessMs: number;
}

interface DeleteOp {
  readonly kind: 'delete';
}

type WarmOp = PutOp | TouchOp | DeleteOp;

/** A variant of a key as a read finds it: a waiting put, or an index record on disk. */
type Found = { readonly queued: string; readonly put: PutOp; readonly record?: undefined } | { readonly queued: string; readonly put?: undefined; readonly record: IndexRecord };

/** No id: a recency key of a time alone sorts before every variant used at that time. */
const NO_ID = Buffer.alloc(0);

/** The write queue's key for a record id: 16 bytes as a one-byte-per-char string. */
function queueKey(key: string, variantKey: string): string {
  return recordId(key, variantKey).toString('latin1');
}

/** The queue's group of a record id (or of a key prefix): the key prefix its variants share. */
function groupOf(queued: string): string {
  return queued.slice(0, KEY_PREFIX_BYTES);
}

class LmdbCacheStore implements WarmStore {
  readonly #tables: WarmTables;
  readonly #queue: WriteQueue<WarmOp>;
  readonly #maxBytes: number;
  readonly #writeQueueLength: number;
  readonly #now: () => number;
  /** What the store holds once the queue is written: the totals on disk plus what waits. */
  #entryCount: number;
  #byteCount: number;
  /** The waiting puts in order of last access, least recent first: eviction candidates beside the disk's. */
  readonly #waitingPuts = new Map<string, PutOp>();
  #putSeq = 0;
  /**
   * Where the next search of the recency table starts (an access time): what lies before it was
   * evicted already or had an operation waiting. Without it, evicting behind a queue of deletes not
   * yet written would read past all of them each time.
   */
  #evictFrom: Buffer | undefined;
  #droppedWrites = 0;
  readonly #synced: SyncWatermark;
  #selfHeals = 0;
  #readErrors = 0;
  #writeErrors = 0;
  #closed = false;
  readonly openReport: WarmOpenReport;

  constructor(tables: WarmTables, options: WarmStoreOptions, openReport: Omit<WarmOpenReport, 'entryCount'>) {
    this.#tables = tables;
    this.#maxBytes = options.maxBytes;
    this.#writeQueueLength = options.writeQueueLength;
    this.#now = options.now ?? Date.now;
    const totals = readTotals(tables);
    this.#entryCount = totals.entries;
    this.#byteCount = totals.bytes;
    this.#queue = new WriteQueue<WarmOp>({
      maxPuts: options.writeQueueLength,
      commit: (batch) => this.#commit(batch),
      onFailed: (batch) => this.#failed(batch),
      groupOf,
    });
    this.#synced = new SyncWatermark(this.#now, () => this.#queue.settled());
    this.openReport = { ...openReport, entryCount: totals.entries };
    // A lowered maxBytes takes effect at once.
    this.#evictToFit(undefined);
  }

  get entryCount(): number {
    return this.#entryCount;
  }

  get byteCount(): number {
    return this.#byteCount;
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

  variants(key: string): CacheEntry[] {
    return this.#entriesOf(key, true);
  }

  peek(key: string): CacheEntry[] {
    return this.#entriesOf(key, false);
  }

  has(key: string, variantKey: string): boolean {
    if (this.#closed) return false;
    const queued = queueKey(key, variantKey);
    const op = this.#queue.pending(queued);
    if (op !== undefined) return op.kind !== 'delete';
    try {
      return this.#tables.index.doesExist(Buffer.from(queued, 'latin1'));
    } catch {
      this.#readErrors += 1;
      return false;
    }
  }

  releaseStaleReaders(): number {
    return this.#closed ? 0 : this.#tables.env.readerCheck();
  }

  markUsed(key: string, variantKey: string): void {
    if (this.#closed) return;
    const queued = queueKey(key, variantKey);
    const op = this.#queue.pending(queued);
    if (op?.kind === 'delete') return;
    if (op?.kind === 'put') return this.#usePut(queued, op, this.#now());
    const record = this.#indexRecord(queued);
    if (record !== undefined) this.#touch(queued, record, this.#now());
  }

  put(entry: CacheEntry): PutOutcome {
    if (this.#closed) return 'dropped';
    const sizeBytes = entrySizeBytes(entry);
    if (sizeBytes > this.#maxBytes) return 'too_large';
    const queued = queueKey(entry.key, entry.variantKey);
    const before = this.#sizeOf(queued);
    if (before === undefined && this.#found(entry.key, groupOf(queued)).length >= MAX_VARIANTS) return 'vary_cap';
    if (!this.#queue.hasRoomForPut(queued)) {
      this.#droppedWrites += 1;
      return 'dropped';
    }
    const op: PutOp = { kind: 'put', entry, sizeBytes, lastAccessMs: this.#now(), seq: ++this.#putSeq };
    this.#queue.enqueue(queued, op);
    this.#waitingPuts.delete(queued);
    this.#waitingPuts.set(queued, op);
    if (before === undefined) this.#entryCount += 1;
    this.#byteCount += sizeBytes - (before ?? 0);
    this.#evictToFit(queued);
    return 'stored';
  }

  delete(key: string, variantKey?: string): number {
    if (this.#closed) return 0;
    if (variantKey !== undefined) {
      const queued = queueKey(key, variantKey);
      const sizeBytes = this.#sizeOf(queued);
      if (sizeBytes === undefined) return 0;
      this.#remove(queued, sizeBytes);
      return 1;
    }
    const found = this.#found(key);
    for (const variant of found) this.#remove(variant.queued, variant.put?.sizeBytes ?? variant.record!.sizeBytes);
    return found.length;
  }

  *entries(): Generator<CacheEntry> {
    for (const variant of this.#walk()) {
      const entry = variant.put?.entry ?? this.#readRecord(variant.queued, variant.record!, true);
      if (entry !== undefined) yield entry;
    }
  }

  *summaries(): Generator<StoredSummary> {
    for (const variant of this.#walk()) yield variant.put?.entry ?? variant.record!;
  }

  flush(): Promise<void> {
    return this.#queue.settled();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.settled();
    this.#synced.stop();
    await this.#tables.env.close();
  }

  /** The entries of `key`: waiting puts most recently stored first, then those on disk most recently fetched first. */
  #entriesOf(key: string, markUsed: boolean): CacheEntry[] {
    if (this.#closed) return [];
    const found = this.#found(key);
    if (found.length === 0) return [];
    const now = markUsed ? this.#now() : 0;
    const waiting: PutOp[] = [];
    const stored: CacheEntry[] = [];
    for (const variant of found) {
      if (variant.put !== undefined) {
        waiting.push(variant.put);
        if (markUsed) this.#usePut(variant.queued, variant.put, now);
        continue;
      }
      const entry = this.#readRecord(variant.queued, variant.record, false);
      if (entry === undefined) continue;
      stored.push(entry);
      if (markUsed) this.#touch(variant.queued, variant.record, now);
    }
    waiting.sort((a, b) => b.seq - a.seq);
    stored.sort((a, b) => b.requestTimeMs - a.requestTimeMs);
    return [...waiting.map((op) => op.entry), ...stored];
  }

  /**
   * Every variant of `key` the store holds: one range read of the index over the ids that begin with
   * the key's hash, seen through the operations waiting for them, and the waiting puts of new ones.
   */
  #found(key: string, group = groupOf(keyPrefix(key).toString('latin1'))): Found[] {
    const found: Found[] = [];
    const seen = new Set<string>();
    try {
      for (const { key: id, value } of this.#tables.index.getRange(prefixRange(Buffer.from(group, 'latin1')))) {
        const queued = (id as Buffer).toString('latin1');
        seen.add(queued);
        const op = this.#queue.pending(queued);
        if (op?.kind === 'delete') continue;
        if (op?.kind === 'put') {
          if (op.entry.key === key) found.push({ queued, put: op });
          continue;
        }
        const record = this.#decodeIndex(queued, value);
        // Another key whose hash shares the prefix is not this key's.
        if (record !== undefined && record.key === key) found.push({ queued, record });
      }
    } catch {
      this.#readErrors += 1;
      return [];
    }
    for (const queued of this.#queue.pendingIn(group)) {
      if (seen.has(queued)) continue;
      const op = this.#queue.pending(queued);
      if (op?.kind === 'put' && op.entry.key === key) found.push({ queued, put: op });
    }
    return found;
  }

  /**
   * Every variant the store holds, for the sweeps: the waiting puts first (from a copy, since one
   * may be written while the caller pauses), then the index on disk, read without holding a snapshot
   * so that a long sweep neither pins lmdb's pages nor visits what was deleted since it began.
   */
  *#walk(): Generator<Found> {
    const waiting = [...this.#queue.pendingOps()].filter(([, op]) => op.kind === 'put').map(([queued]) => queued);
    const visited = new Set(waiting);
    for (const queued of waiting) {
      if (this.#closed) return;
      const op = this.#queue.pending(queued);
      if (op?.kind === 'put') {
        yield { queued, put: op };
        continue;
      }
      if (op?.kind === 'delete') continue;
      const record = this.#indexRecord(queued);
      if (record !== undefined) yield { queued, record };
    }
    if (this.#closed) return;
    for (const { key: id, value } of this.#tables.index.getRange({ snapshot: false })) {
      if (this.#closed) return;
      const queued = (id as Buffer).toString('latin1');
      if (visited.has(queued)) continue;
      const op = this.#queue.pending(queued);
      if (op?.kind === 'delete') continue;
      if (op?.kind === 'put') {
        yield { queued, put: op };
        continue;
      }
      const record = this.#decodeIndex(queued, value);
      if (record !== undefined) yield { queued, record };
    }
  }

  /** What the store holds for a record id now, in bytes: the waiting operation's result, else the disk's. */
  #sizeOf(queued: string): number | undefined {
    const op = this.#queue.pending(queued);
    if (op?.kind === 'put') return op.sizeBytes;
    if (op?.kind === 'delete') return undefined;
    return this.#indexRecord(queued)?.sizeBytes;
  }

  /** The index record of an id on disk, if any; a damaged one is healed and answers nothing. */
  #indexRecord(queued: string): IndexRecord | undefined {
    let stored: Buffer | undefined;
    try {
      stored = this.#tables.index.getBinary(Buffer.from(queued, 'latin1'));
    } catch {
      this.#readErrors += 1;
      return undefined;
    }
    return stored === undefined ? undefined : this.#decodeIndex(queued, stored);
  }

  #decodeIndex(queued: string, stored: Buffer): IndexRecord | undefined {
    try {
      return decodeIndexRecord(stored);
    } catch (error) {
      if (!(error instanceof CorruptRecordError)) throw error;
      // Its size is what the record says, when the record at least is whole.
      this.#heal(queued, this.#sizeOfDamaged(Buffer.from(queued, 'latin1')));
      return undefined;
    }
  }

  /**
   * The entry an index record stands for, verified. `mayBeGone`: the record was found by a read that
   * may predate a delete since written (a sweep), so a record no longer there is not damage.
   */
  #readRecord(queued: string, index: IndexRecord, mayBeGone: boolean): CacheEntry | undefined {
    const id = Buffer.from(queued, 'latin1');
    let stored: Buffer | undefined;
    try {
      stored = this.#tables.records.getBinary(id);
      if (stored === undefined && mayBeGone && !this.#tables.index.doesExist(id)) return undefined;
    } catch {
      this.#readErrors += 1;
      return undefined;
    }
    // Whatever fails here (a missing record, a bad checksum, a record for another key, a decoder
    // surprise) means the record cannot be trusted: it is deleted, never served.
    try {
      if (stored === undefined) throw new CorruptRecordError('index names a record that is missing');
      const entry = decodeEntry(stored);
      if (entry.key !== index.key || entry.variantKey !== index.variantKey) {
        throw new CorruptRecordError('record holds another key');
      }
      return entry;
    } catch {
      this.#heal(queued, index.sizeBytes);
      return undefined;
    }
  }

  /** The size of a variant whose index record is damaged, from its record when that is whole; else 0. */
  #sizeOfDamaged(id: Buffer): number {
    try {
      const stored = this.#tables.records.getBinary(id);
      return stored === undefined ? 0 : entrySizeBytes(decodeEntry(stored));
    } catch {
      return 0;
    }
  }

  #heal(queued: string, sizeBytes: number): void {
    this.#selfHeals += 1;
    this.#remove(queued, sizeBytes);
  }

  #usePut(queued: string, op: PutOp, now: number): void {
    op.lastAccessMs = now;
    if (this.#waitingPuts.get(queued) !== op) return;
    this.#waitingPuts.delete(queued);
    this.#waitingPuts.set(queued, op);
  }

  /** A use of a variant on disk: written only when the stored access time is a minute old. */
  #touch(queued: string, record: IndexRecord, now: number): void {
    const op = this.#queue.pending(queued);
    if (op?.kind === 'touch') {
      op.lastAccessMs = now;
      return;
    }
    if (op !== undefined || now - record.lastAccessMs < ACCESS_PERSIST_INTERVAL_MS) return;
    // Access times are a hint: skipped when the queue is busy.
    if (this.#queue.length >= this.#writeQueueLength) return;
    this.#queue.enqueue(queued, { kind: 'touch', lastAccessMs: now });
  }

  /** Deletes a variant the store holds, of `sizeBytes`: at once for reads, on disk with the next batch. */
  #remove(queued: string, sizeBytes: number): void {
    this.#queue.enqueue(queued, { kind: 'delete' });
    this.#waitingPuts.delete(queued);
    this.#entryCount -= 1;
    this.#byteCount -= sizeBytes;
  }

  /** Evicts the least recently used variants, never `keep`, until the store is within its bound. */
  #evictToFit(keep: string | undefined): void {
    while (this.#byteCount > this.#maxBytes) {
      const victim = this.#oldest(keep);
      if (victim === undefined) return;
      this.#remove(victim.queued, victim.sizeBytes);
    }
  }

  /** The least recently used variant: the oldest waiting put, or the oldest on disk with nothing waiting. */
  #oldest(keep: string | undefined): { queued: string; sizeBytes: number } | undefined {
    let waiting: [string, PutOp] | undefined;
    for (const candidate of this.#waitingPuts) {
      if (candidate[0] === keep) continue;
      waiting = candidate;
      break;
    }
    const stored = this.#oldestOnDisk(waiting?.[1].lastAccessMs ?? Infinity);
    if (stored !== undefined) return stored;
    return waiting === undefined ? undefined : { queued: waiting[0], sizeBytes: waiting[1].sizeBytes };
  }

  /**
   * The oldest variant on disk with no operation waiting, if it was used no later than `beforeMs`.
   * The search starts at the last one's access time; past the newest it starts again from the
   * beginning (where a clock set back would have written).
   */
  #oldestOnDisk(beforeMs: number): { queued: string; sizeBytes: number } | undefined {
    try {
      for (const { key, value } of this.#tables.recency.getRange(this.#evictFrom === undefined ? {} : { start: this.#evictFrom })) {
        const at = key as Buffer;
        const lastAccessMs = recencyTimeMs(at);
        // Nothing older than the oldest waiting put from here on.
        if (lastAccessMs > beforeMs) return undefined;
        const queued = recencyQueueKey(at);
        // A variant with an operation waiting was used since, or is going already. An entry whose
        // index record is gone or says otherwise is left over from damage.
        if (this.#queue.pending(queued) !== undefined || this.#indexRecord(queued)?.lastAccessMs !== lastAccessMs) continue;
        this.#evictFrom = recencyKey(lastAccessMs, NO_ID);
        return { queued, sizeBytes: decodeRecencySize(value) };
      }
    } catch {
      this.#readErrors += 1;
      return undefined;
    }
    this.#evictFrom = undefined;
    return undefined;
  }

  async #commit(batch: ReadonlyMap<string, WarmOp>): Promise<void> {
    const { env, records, index, recency } = this.#tables;
    await env.transaction(() => {
      const totals = readTotals(this.#tables);
      for (const [queued, op] of batch) {
        const id = Buffer.from(queued, 'latin1');
        const stored = index.getBinary(id);
        let old: IndexRecord | undefined;
        if (stored !== undefined) {
          totals.entries -= 1;
          try {
            old = decodeIndexRecord(stored);
            totals.bytes -= old.sizeBytes;
            recency.remove(recencyKey(old.lastAccessMs, id));
          } catch {
            totals.bytes -= this.#sizeOfDamaged(id);
          }
        }
        // A touch of a variant deleted or damaged since (its delete or heal follows) writes nothing.
        if (op.kind === 'delete' || (op.kind === 'touch' && old === undefined)) {
          records.remove(id);
          index.remove(id);
          continue;
        }
        let record: IndexRecord;
        if (op.kind === 'put') {
          const { key, variantKey, requestTimeMs, tags } = op.entry;
          record = { key, variantKey, sizeBytes: op.sizeBytes, lastAccessMs: op.lastAccessMs, requestTimeMs, tags };
          records.put(id, encodeEntry(op.entry));
        } else {
          record = { ...old!, lastAccessMs: op.lastAccessMs };
        }
        index.put(id, encodeIndexRecord(record));
        recency.put(recencyKey(record.lastAccessMs, id), encodeRecencySize(record.sizeBytes));
        totals.entries += 1;
        totals.bytes += record.sizeBytes;
      }
      writeTotals(this.#tables, totals);
    });
    await env.flushed;
    for (const [queued, op] of batch) if (this.#waitingPuts.get(queued) === op) this.#waitingPuts.delete(queued);
    // The watermark follows at once rather than at its next step: under load, that keeps it close.
    this.#synced.advance();
  }

  /** A batch that did not commit: its puts are lost (and undone on disk), its deletes retried. */
  #failed(batch: ReadonlyMap<string, WarmOp>): void {
    this.#writeErrors += 1;
    if (this.#closed) return;
    for (const [queued, op] of batch) {
      // A newer operation for the record supersedes this one.
      if (this.#queue.pending(queued) !== op) continue;
      if (op.kind === 'touch') continue;
      if (op.kind === 'delete') {
        this.#queue.enqueue(queued, op);
        continue;
      }
      // A delete for a failed put: an older version of the record may be on disk.
      this.#droppedWrites += 1;
      this.#remove(queued, op.sizeBytes);
    }
  }
}

/**
 * Opens the warm tier at `options.path`: the startup `log_replay` work, which reads no record (the
 * totals come from the meta table). Rejects with StoreError `open_failed` when the directory cannot
 * be used.
 */
export async function openWarmStore(options: WarmStoreOptions): Promise<WarmStore> {
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
    return new LmdbCacheStore(tables, options, { durationMs: performance.now() - startedMs, discardedSchema, discardedMode });
  } catch (error) {
    await tables.env.close();
    throw new StoreError('open_failed', `cannot open the warm store at ${options.path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
