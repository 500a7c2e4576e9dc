// Which hot-tier entries carry each surrogate key, so a ban by surrogate key evicts its entries
// without scanning the tier (spec §1.1, issue 4). Kept up to date by the TieredCache's hot-tier
// notifications; holds only references to entries the hot tier already holds.
import type { CacheEntry } from '../cache/entry.js';
import type { HotTierObserver } from '../cache/tiered-cache.js';

export class HotTagIndex implements HotTierObserver {
  readonly #byTag = new Map<string, Set<CacheEntry>>();
  /** Tagged entries by key and variantKey: a put replacing a variant must unindex the one it replaced. */
  readonly #byKey = new Map<string, Map<string, CacheEntry>>();

  /** Entries of the hot tier tagged `tag`. */
  tagged(tag: string): readonly CacheEntry[] {
    const entries = this.#byTag.get(tag);
    return entries === undefined ? [] : [...entries];
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
      const entries = this.#byTag.get(tag);
      if (entries === undefined) this.#byTag.set(tag, new Set([entry]));
      else entries.add(entry);
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
