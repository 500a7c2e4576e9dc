// Which hot-tier entries carry each surrogate key, so a ban by surrogate key evicts its entries
// without scanning the tier (spec §1.1, issue 4). Kept up to date by the TieredCache's hot-tier
// notifications; holds only references to entries the hot tier already holds. Its maps and its
// large sets are sharded (src/store/sharded-map.ts): a ban over a tag a million entries carry
// empties them, and a plain Map or Set would rehash hundreds of thousands of items in one delete.
import type { CacheEntry } from '../cache/entry.js';
import type { HotTierObserver } from '../cache/tiered-cache.js';
import { ShardedMap, ShardedSet } from '../store/sharded-map.js';

const entryKey = (entry: CacheEntry): string => entry.key;

export class HotTagIndex implements HotTierObserver {
  readonly #byTag = new ShardedMap<ShardedSet<CacheEntry>>();
  /** Tagged entries by key and variantKey: a put replacing a variant must unindex the one it replaced. */
  readonly #byKey = new ShardedMap<Map<string, CacheEntry>>();

  /**
   * Entries of the hot tier tagged `tag`, read live rather than copied (a tag may be on a million
   * entries): one removed while the caller iterates is skipped, one stored meanwhile may be visited.
   */
  tagged(tag: string): Iterable<CacheEntry> {
    return this.#byTag.get(tag)?.values() ?? [];
  }

  /** Tags indexed, for tests and stats. */
  get tagCount(): number {
    return this.#byTag.size;
  }

  stored(entry: CacheEntry): void {
    const variants = this.#byKey.get(entry.key);
    const replaced = variants?.get(entry.variantKey);
    if (replaced === entry) return;
    if (replaced !== undefined) this.#unindex(replaced);
    if (entry.tags.length === 0) return;
    if (variants === undefined) this.#byKey.set(entry.key, new Map([[entry.variantKey, entry]]));
    else variants.set(entry.variantKey, entry);
    for (const tag of entry.tags) {
      let entries = this.#byTag.get(tag);
      if (entries === undefined) {
        entries = new ShardedSet(entryKey);
        this.#byTag.set(tag, entries);
      }
      entries.add(entry);
    }
  }

  removed(key: string, variantKey: string | undefined): void {
    const variants = this.#byKey.get(key);
    if (variants === undefined) return;
    if (variantKey === undefined) {
      for (const entry of [...variants.values()]) this.#unindex(entry);
      return;
    }
    const entry = variants.get(variantKey);
    if (entry !== undefined) this.#unindex(entry);
  }

  #unindex(entry: CacheEntry): void {
    const variants = this.#byKey.get(entry.key);
    if (variants?.get(entry.variantKey) === entry) {
      variants.delete(entry.variantKey);
      if (variants.size === 0) this.#byKey.delete(entry.key);
    }
    for (const tag of entry.tags) {
      const entries = this.#byTag.get(tag);
      if (entries === undefined) continue;
      entries.delete(entry);
      if (entries.size === 0) this.#byTag.delete(tag);
    }
  }
}
