// The warm tier joining the cache once its index is rebuilt. Until then the node serves without it
// (misses go to the origin, nothing is written to it), so that readiness does not wait for an index
// of a million records; docs/storage.md "Startup" says why. What it must not lose meanwhile is an
// invalidation: a purge, refresh or expiring purge record that reaches the cache while the tier is out
// is recorded here by key, and applied to the tier the moment it joins, before any lookup can see it.
// The tier takes no writes while it is out, so nothing it holds can be newer than what is recorded.
import type { CacheStore } from '../store/cache-store.js';

export class WarmJoin {
  /** Keys invalidated while the tier was out: what was fetched at or before the time goes. */
  readonly #invalidated = new Map<string, number>();

  /** The variants of `key` fetched at or before `atMs` (every variant for Infinity) go when the tier joins. */
  invalidate(key: string, atMs = Infinity): void {
    this.#invalidated.set(key, Math.max(this.#invalidated.get(key) ?? -Infinity, atMs));
  }

  /**
   * Applies what was recorded to the tier, which has just been indexed. A refresh recorded here
   * deletes rather than marks stale: the entry is gone rather than served fresh. Returns the number
   * of keys applied.
   */
  applyTo(warm: CacheStore): number {
    for (const [key, atMs] of this.#invalidated) {
      if (atMs === Infinity) {
        warm.delete(key);
        continue;
      }
      for (const entry of warm.peek(key)) if (entry.requestTimeMs <= atMs) warm.delete(key, entry.variantKey);
    }
    return this.#invalidated.size;
  }
}
