// The small interface both cache tiers implement (undici's CacheStore is the model). Stores know
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
 *   entry was not kept; the store counts it.
 */
export type PutOutcome = 'stored' | 'vary_cap' | 'too_large' | 'dropped';

/** What the invalidation sweeps read of a stored variant: no body, no header field. */
export interface StoredSummary {
  readonly key: string;
  readonly variantKey: string;
  /** `CacheEntry.requestTimeMs`: what a ban's or a purge's time is compared with. */
  readonly requestTimeMs: number;
  /** `CacheEntry.tags`: what a surrogate-key ban matches. */
  readonly tags: readonly string[];
}

export interface CacheStore {
  readonly tier: 'hot' | 'warm';
  /** Every stored variant of a primary key, most recently stored first; marks them recently used. */
  variants(key: string): CacheEntry[];
  /**
   * The same list without marking anything used: for readers that are not requests (debug output,
   * invalidation), which must not keep an entry from eviction.
   */
  peek(key: string): CacheEntry[];
  /**
   * Whether the variant `(key, variantKey)` is stored, answered from the store's index: nothing is
   * read, decoded or marked used. For moving entries between tiers, which only need to know.
   */
  has(key: string, variantKey: string): boolean;
  /** Stores or replaces the variant `(entry.key, entry.variantKey)`, evicting by recency to fit. */
  put(entry: CacheEntry): PutOutcome;
  /** Removes one variant, or every variant of `key` when `variantKey` is omitted; returns how many. */
  delete(key: string, variantKey?: string): number;
  /** Every entry, in no particular order; safe against deletes made while iterating. */
  entries(): Iterable<CacheEntry>;
  /**
   * What entries() would give, as summaries answered from the store's index: nothing is read from
   * disk or decoded. For the sweeps of the invalidation engine, which must not read bodies.
   */
  summaries(): Iterable<StoredSummary>;
  readonly entryCount: number;
  readonly byteCount: number;
  /** Resolves once every accepted `put` and `delete` is visible to a fresh process (durable). */
  flush(): Promise<void>;
  close(): Promise<void>;
}
