// The hot tier: entries held in memory, bounded in bytes (entrySizeBytes: body, header text and key
// material), evicting the least recently used variant first. Eviction hands the entry to `onEvict`
// so the caller can demote it to the warm tier; explicit deletes do not.

import { entrySizeBytes, type CacheEntry } from '../cache/entry.js';
import type { CacheStore, PutOutcome } from './cache-store.js';
import { RecencyIndex, type IndexNode } from './recency-index.js';
import { StoreError } from './errors.js';

export interface HotStoreOptions {
  /** The byte bound (`hot_max_bytes`); entries are evicted by recency to stay within it. */
  maxBytes: number;
  /** Called with each entry evicted to make room (not for explicit deletes); must not throw. */
  onEvict?: (entry: CacheEntry) => void;
}

export interface HotStore extends CacheStore {
  readonly tier: 'hot';
  /** Entries evicted to make room since creation (svc_hot_store_evictions_total). */
  readonly evictionCount: number;
  /** New variants refused because their key already had MAX_VARIANTS (svc_vary_cap_hits_total). */
  readonly varyCapHits: number;
  /** Changes the byte bound (a configuration reload); a smaller one evicts the least recently used now. */
  resize(maxBytes: number): void;
}

/**
 * One stored variant: the entry plus the list links, with no per-entry closure or Map. The keys are
 * read through the entry (prototype getters) rather than copied, which saves two fields per entry.
 */
class HotNode implements IndexNode {
  newer: HotNode | null = null;
  older: HotNode | null = null;

  constructor(
    readonly entry: CacheEntry,
    public sizeBytes: number,
  ) {}

  get key(): string {
    return this.entry.key;
  }

  get variantKey(): string {
    return this.entry.variantKey;
  }
}

class MemoryCacheStore implements HotStore {
  readonly tier = 'hot';
  readonly #index = new RecencyIndex<HotNode>();
  #maxBytes: number;
  readonly #onEvict: ((entry: CacheEntry) => void) | undefined;
  #evictionCount = 0;
  #varyCapHits = 0;

  constructor(options: HotStoreOptions) {
    this.#maxBytes = checkedMaxBytes(options.maxBytes);
    this.#onEvict = options.onEvict;
  }

  resize(maxBytes: number): void {
    this.#maxBytes = checkedMaxBytes(maxBytes);
    this.#evictToFit(null);
  }

  get entryCount(): number {
    return this.#index.entryCount;
  }

  get byteCount(): number {
    return this.#index.byteCount;
  }

  get evictionCount(): number {
    return this.#evictionCount;
  }

  get varyCapHits(): number {
    return this.#varyCapHits;
  }

  variants(key: string): CacheEntry[] {
    return this.#variants(key, true);
  }

  peek(key: string): CacheEntry[] {
    return this.#variants(key, false);
  }

  has(key: string, variantKey: string): boolean {
    return this.#index.find(key, variantKey) !== undefined;
  }

  put(entry: CacheEntry): PutOutcome {
    // The size is taken once: later in-place header edits do not skew the accounting, and a
    // re-put after a revalidation recounts the entry.
    const sizeBytes = entrySizeBytes(entry);
    if (sizeBytes > this.#maxBytes) return 'too_large';
    if (this.#index.admission(entry.key, entry.variantKey) === 'vary_cap') {
      this.#varyCapHits += 1;
      return 'vary_cap';
    }
    const node = new HotNode(entry, sizeBytes);
    this.#index.add(node);
    this.#evictToFit(node);
    return 'stored';
  }

  delete(key: string, variantKey?: string): number {
    if (variantKey !== undefined) {
      const node = this.#index.find(key, variantKey);
      if (node === undefined) return 0;
      this.#index.remove(node);
      return 1;
    }
    const nodes = [...this.#index.variantsOf(key)];
    for (const node of nodes) this.#index.remove(node);
    return nodes.length;
  }

  *entries(): Generator<CacheEntry> {
    for (const node of this.#index.nodes()) yield node.entry;
  }

  summaries(): Iterable<CacheEntry> {
    // An entry in memory is its own summary.
    return this.entries();
  }

  async flush(): Promise<void> {
    // Memory has nothing to make durable.
  }

  async close(): Promise<void> {
    for (const node of [...this.#index.nodes()]) this.#index.remove(node);
  }

  #variants(key: string, markUsed: boolean): CacheEntry[] {
    const nodes = this.#index.variantsOf(key);
    const found: CacheEntry[] = [];
    for (let i = nodes.length - 1; i >= 0; i -= 1) {
      const node = nodes[i] as HotNode;
      if (markUsed) this.#index.touch(node);
      found.push(node.entry);
    }
    return found;
  }

  #evictToFit(keep: HotNode | null): void {
    while (this.#index.byteCount > this.#maxBytes) {
      const victim = this.#index.oldest();
      // `keep` alone fits (checked by put), so the loop ends before reaching it.
      if (victim === undefined || victim === keep) return;
      this.#index.remove(victim);
      this.#evictionCount += 1;
      this.#onEvict?.(victim.entry);
    }
  }
}

function checkedMaxBytes(maxBytes: number): number {
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new StoreError('invalid_option', `hot store maxBytes must be a positive integer, got ${maxBytes}`);
  }
  return maxBytes;
}

/** Creates the in-memory tier bounded by `maxBytes`. */
export function createHotStore(options: HotStoreOptions): HotStore {
  return new MemoryCacheStore(options);
}
