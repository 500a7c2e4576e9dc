// What the cache asks of a store, and, apart, what only others ask (docs/architecture.md "Store
// interfaces"). undici's CacheStore is the model: look up, store, delete, nothing else. Stores know
// nothing of HTTP semantics: the cache layer decides what is fresh, what a ban hides and which variant
// a request selects; a store only keeps entries within its byte bound.
// A store error on the request path must degrade to a miss, never break a response: implementations
// catch their own I/O errors, count them and answer as if the entry were absent.

import type { CacheEntry } from '../cache/entry.js';

/** Vary handling keeps at most this many variants of one primary key (spec §2.3 `MaxVariants`). */
export const MAX_VARIANTS = 64;

/**
 * What `put` did:
 * - `stored`: the entry (or the replaced variant with the same variantKey) is kept;
 * - `vary_cap`: a new variant was refused because the key already has MAX_VARIANTS;
 * - `too_large`: the entry alone exceeds what the store may hold;
 * - `dropped`: a store that writes asynchronously (warm) had its bounded write queue full, so the
 *   entry was not kept; the store counts it;
 * - `sent`: the store's writer is another thread (a data-plane worker's warm tier), which was handed
 *   the entry and decides there, counting what it refuses; reads see the entry once it is written.
 */
export type PutOutcome = 'stored' | 'vary_cap' | 'too_large' | 'dropped' | 'sent';

/** What the invalidation sweeps read of a stored variant: no body, no header field. */
export interface StoredSummary {
  readonly key: string;
  readonly variantKey: string;
  /** `CacheEntry.requestTimeMs`: what a ban's or a purge's time is compared with. */
  readonly requestTimeMs: number;
  /** `CacheEntry.tags`: what a surrogate-key ban matches. */
  readonly tags: readonly string[];
}

/** What the cache path asks of a tier: look up, store, delete. Every tier implements it. */
export interface CacheStore {
  /** Every stored variant of a primary key, most recently stored first; marks them recently used. */
  variants(key: string): CacheEntry[];
  /**
   * The same list without marking anything used: for readers that are not requests (the store check
   * of a fill, invalidation by key, debug output), which must not keep an entry from eviction.
   */
  peek(key: string): CacheEntry[];
  /** Stores or replaces the variant `(entry.key, entry.variantKey)`, evicting by recency to fit. */
  put(entry: CacheEntry): PutOutcome;
  /**
   * Removes one variant, or every variant of `key` when `variantKey` is omitted; returns how many
   * reads stopped seeing. A store whose writer is another thread sends the delete there and returns 0:
   * its reads see the variants until the writer has removed them, and the writer counts them.
   */
  delete(key: string, variantKey?: string): number;
}

/** A tier the hot tier demotes its evictions into, which must not be written again what it holds. */
export interface DemotionTarget {
  /**
   * Whether the variant `(key, variantKey)` is stored, answered from the store's index: nothing is
   * read, decoded or marked used.
   */
  has(key: string, variantKey: string): boolean;
}

/** A store the invalidation engine sweeps: the thread that writes it walks what it holds. */
export interface SweptStore {
  /**
   * Every stored variant as a summary, in no particular order, answered from the store's index:
   * nothing is read from disk or decoded. Safe against deletes made while iterating.
   */
  summaries(): Iterable<StoredSummary>;
}

/** What the admin API, the metrics and the tests read of a store that holds its own entries. */
export interface StoreInspection {
  readonly entryCount: number;
  readonly byteCount: number;
  /** Every entry, in no particular order; safe against deletes made while iterating. */
  entries(): Iterable<CacheEntry>;
}

/** A store whose entries outlive the process: the node makes its writes durable and closes it. */
export interface DurableStore {
  /** Resolves once every accepted `put` and `delete` is visible to a fresh process (durable). */
  flush(): Promise<void>;
  close(): Promise<void>;
}
