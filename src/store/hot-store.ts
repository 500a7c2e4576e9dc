// The hot tier: entries held in memory, bounded in bytes, evicting by recency (CLOCK). One hot tier
// per node, however many threads serve it: its memory is shared (shared-hot/), and a node's threads
// each open a store over the same memory. Eviction hands the entry to `onEvict` so the caller can
// demote it to the warm tier; explicit deletes do not.
import type { CacheEntry } from '../cache/entry.js';
import type { CacheStore, StoreInspection, SweptStore } from './cache-store.js';
import { StoreError } from './errors.js';
import { createHotMemory, type HotMemory } from './shared-hot/hot-memory.js';
import { SharedHotStore } from './shared-hot/shared-hot-store.js';
import { recordSize } from './shared-hot/hot-record.js';

export type { HotMemory } from './shared-hot/hot-memory.js';

export interface HotStoreOptions {
  /** The byte bound (`hot_max_bytes`): records, their headers included, fit within it. */
  maxBytes: number;
  /**
   * The node's hot-tier memory, when another thread made it: this store then serves the same
   * entries as every other store over it. Without it the store makes its own.
   */
  memory?: HotMemory | undefined;
  /** Called with each entry evicted to make room (not for explicit deletes); must not throw. */
  onEvict?: ((entry: CacheEntry) => void) | undefined;
}

/** The hot tier: read and written on the cache path, swept by the invalidation engine, inspected. */
export interface HotStore extends CacheStore, SweptStore, StoreInspection {
  /** The memory this store works on, to hand to the node's other threads. */
  readonly memory: HotMemory;
  /** Entries evicted to make room since the memory was made (svc_hot_store_evictions_total). */
  readonly evictionCount: number;
  /** New variants refused because their key already had MAX_VARIANTS (svc_vary_cap_hits_total). */
  readonly varyCapHits: number;
  /** Changes the byte bound (a configuration reload); a smaller one evicts at once. */
  resize(maxBytes: number): void;
}

/** The bytes the hot tier counts for `entry` (its record: the entry's fields, head and body). */
export function hotEntryBytes(entry: CacheEntry): number {
  return recordSize(entry);
}

/** Creates a store over `options.memory`, or over new memory of `options.maxBytes`. */
export function createHotStore(options: HotStoreOptions): SharedHotStore & HotStore {
  if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) {
    throw new StoreError('invalid_option', `hot store maxBytes must be a positive integer, got ${options.maxBytes}`);
  }
  return new SharedHotStore({ memory: options.memory ?? createHotMemory(options.maxBytes), onEvict: options.onEvict });
}
