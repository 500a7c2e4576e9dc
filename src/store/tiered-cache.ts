// The two cache tiers seen as one: lookups try the hot tier, then the warm tier (promoting what they
// find), stores go to the hot tier and are written through to the warm one, whose bounded write
// queue makes the disk copy asynchronous. A hot eviction demotes the entry to the warm tier when the
// write-through copy was dropped under pressure. Store failures degrade to misses (DESIGN principle 6).
import type { CacheEntry } from '../cache/entry.js';
import { MAX_VARIANTS, type CacheStore, type DemotionTarget, type DurableStore, type PutOutcome, type SweptStore } from './cache-store.js';
import type { HotStore } from './hot-store.js';

/** The warm tier as every thread of a node uses it: the cache path, and demotion from the hot tier. */
export type WarmTier = CacheStore & DemotionTarget;

/** The warm tier as the thread that writes it uses it: also swept for invalidation and made durable there. */
export type OwnedWarmTier = WarmTier & SweptStore & DurableStore;

export interface CacheHit {
  entry: CacheEntry;
  source: 'hot' | 'warm';
}

/**
 * Picks the stored variant a request selects (RFC 9111 §4.1) from the variants of one key, given
 * what the selection depends on (the request's header fields, a variant key…). A plain function and
 * its context rather than a closure: a lookup runs on every request, and a closure is an allocation.
 */
export type VariantSelector<C> = (candidates: readonly CacheEntry[], context: C) => CacheEntry | undefined;

/** Selects the variant whose variant key is the context. */
export function variantWithKey(candidates: readonly CacheEntry[], variantKey: string): CacheEntry | undefined {
  for (const candidate of candidates) if (candidate.variantKey === variantKey) return candidate;
  return undefined;
}

export class TieredCache {
  /**
   * The warm tier when this thread writes it: the invalidation engine sweeps it and makes its changes
   * durable. Undefined without a warm tier, and on a data-plane worker, whose main thread does both.
   */
  readonly ownedWarm: OwnedWarmTier | undefined;

  constructor(hot: HotStore, warm: OwnedWarmTier | undefined);
  /** A data-plane worker's cache: its warm tier, if any, is written by the main thread (worker-warm-tier.ts). */
  constructor(hot: HotStore, warm: WarmTier | undefined, warmWriter: 'main thread');
  constructor(
    readonly hot: HotStore,
    readonly warm: WarmTier | undefined,
    warmWriter?: 'main thread',
  ) {
    // The first signature is the only one without a writer elsewhere, and takes an OwnedWarmTier.
    this.ownedWarm = warmWriter === undefined ? (warm as OwnedWarmTier | undefined) : undefined;
  }

  lookup<C>(key: string, select: VariantSelector<C>, context: C): CacheHit | undefined {
    const hotEntry = select(this.hot.variants(key), context);
    if (hotEntry) return { entry: hotEntry, source: 'hot' };
    if (!this.warm) return undefined;
    const warmEntry = select(this.warm.variants(key), context);
    if (!warmEntry) return undefined;
    this.#putHot(warmEntry);
    return { entry: warmEntry, source: 'warm' };
  }

  /**
   * Whether storing variant `variantKey` of `key` now would be refused because the key already holds
   * MAX_VARIANTS others (the hot tier decides, as in store()). Nothing is marked used.
   */
  atVaryCap(key: string, variantKey: string): boolean {
    const variants = this.hot.peek(key);
    return variants.length >= MAX_VARIANTS && !variants.some((entry) => entry.variantKey === variantKey);
  }

  /** Stores in both tiers; the outcome is the hot tier's (the one a request observes). */
  store(entry: CacheEntry): PutOutcome {
    const outcome = this.#putHot(entry);
    if (outcome !== 'vary_cap') this.warm?.put(entry);
    return outcome;
  }

  /** Called by the hot store when it evicts: keeps the entry on disk if the write-through missed. */
  demote(entry: CacheEntry): void {
    if (!this.warm) return;
    if (!this.warm.has(entry.key, entry.variantKey)) this.warm.put(entry);
  }

  /** Removes every variant of `key` from both tiers; returns how many entries went. */
  delete(key: string, variantKey?: string): number {
    return this.#deleteHot(key, variantKey) + (this.warm?.delete(key, variantKey) ?? 0);
  }

  /**
   * Removes every variant of `key` from both tiers; returns how many distinct variants went (a
   * variant held by both tiers counts once).
   */
  deleteVariants(key: string): number {
    const hotVariants = this.hot.peek(key);
    this.#deleteHot(key, undefined);
    if (!this.warm) return hotVariants.length;
    // The warm tier is asked once per variant the hot tier held, then for the rest, which are the
    // variants only the warm tier held.
    for (const entry of hotVariants) this.warm.delete(key, entry.variantKey);
    return hotVariants.length + this.warm.delete(key);
  }

  /**
   * Replaces every stored variant of `key`, in each tier, with `change(entry)` (undefined leaves that
   * variant as it is); returns how many distinct variants changed. A warm copy that cannot be
   * rewritten (its write queue is full) is deleted, so a restart never brings back the unchanged entry.
   */
  rewriteVariants(key: string, change: (entry: CacheEntry) => CacheEntry | undefined): number {
    const changed = new Set<string>();
    for (const entry of this.hot.peek(key)) {
      const replacement = change(entry);
      // A replacement of the same size always fits where the entry was.
      if (replacement !== undefined && this.#putHot(replacement) === 'stored') changed.add(entry.variantKey);
    }
    if (this.warm) {
      for (const entry of this.warm.peek(key)) {
        const replacement = change(entry);
        if (replacement === undefined) continue;
        const outcome = this.warm.put(replacement);
        if (outcome !== 'stored' && outcome !== 'sent') this.warm.delete(key, entry.variantKey);
        changed.add(entry.variantKey);
      }
    }
    return changed.size;
  }

  /**
   * Removes the variants of `key` whose fetch began at or before `atMs`, from both tiers; returns how
   * many distinct variants went.
   */
  deleteFetchedBy(key: string, atMs: number): number {
    const deleted = new Set<string>();
    for (const entry of this.hot.peek(key)) {
      if (entry.requestTimeMs > atMs) continue;
      if (this.#deleteHot(key, entry.variantKey) + (this.warm?.delete(key, entry.variantKey) ?? 0) > 0) deleted.add(entry.variantKey);
    }
    for (const entry of this.warm?.peek(key) ?? []) {
      if (entry.requestTimeMs <= atMs && (this.warm?.delete(key, entry.variantKey) ?? 0) > 0) deleted.add(entry.variantKey);
    }
    return deleted.size;
  }

  #deleteHot(key: string, variantKey: string | undefined): number {
    return this.hot.delete(key, variantKey);
  }

  #putHot(entry: CacheEntry): PutOutcome {
    return this.hot.put(entry);
  }
}
