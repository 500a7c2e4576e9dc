// The bookkeeping both tiers share: variants grouped under their primary key, one recency list over
// every variant, and exact byte accounting. Each operation is O(1) apart from the per-key variant
// scan, which MAX_VARIANTS bounds. Nodes are intrusive (they carry their own list links) so an entry
// costs one small object and one Map slot, and a key with one variant holds the node directly rather
// than a one-element array.

import { MAX_VARIANTS } from './cache-store.js';
import { ShardedMap } from './sharded-map.js';

/** What a tier keeps per stored variant; tiers extend it with their payload. */
export interface IndexNode {
  readonly key: string;
  readonly variantKey: string;
  /** entrySizeBytes() when stored; -1 once removed, so iterators can skip it. */
  sizeBytes: number;
  newer: IndexNode | null;
  older: IndexNode | null;
}

/** Whether a variant can be added: it replaces one, is new, or would exceed MAX_VARIANTS. */
export type Admission = 'replace' | 'add' | 'vary_cap';

/** What variantsOf answers for a key with no variants: one shared empty list. */
const NONE: readonly never[] = Object.freeze([]);

export class RecencyIndex<N extends IndexNode> {
  /** Sharded: a tier losing most of its entries at once must not rehash them all in one delete. */
  readonly #groups = new ShardedMap<N | N[]>();
  /** Most recently used end of the list. */
  #newest: N | null = null;
  /** Least recently used end: the next to evict. */
  #oldest: N | null = null;
  #entryCount = 0;
  #byteCount = 0;

  get entryCount(): number {
    return this.#entryCount;
  }

  get byteCount(): number {
    return this.#byteCount;
  }

  /** The variants of `key`, oldest stored first; an empty array when there are none. */
  variantsOf(key: string): readonly N[] {
    const group = this.#groups.get(key);
    if (group === undefined) return NONE;
    return Array.isArray(group) ? group : [group];
  }

  find(key: string, variantKey: string): N | undefined {
    const group = this.#groups.get(key);
    if (group === undefined) return undefined;
    if (!Array.isArray(group)) return group.variantKey === variantKey ? group : undefined;
    return group.find((node) => node.variantKey === variantKey);
  }

  admission(key: string, variantKey: string): Admission {
    const group = this.#groups.get(key);
    if (group === undefined) return 'add';
    if (!Array.isArray(group)) return group.variantKey === variantKey ? 'replace' : 'add';
    if (group.some((node) => node.variantKey === variantKey)) return 'replace';
    return group.length >= MAX_VARIANTS ? 'vary_cap' : 'add';
  }

  /**
   * Adds `node` as the newest stored variant of its key and the most recently used node, removing
   * the variant it replaces (returned). The caller checks admission() first.
   */
  add(node: N): N | undefined {
    const replaced = this.find(node.key, node.variantKey);
    if (replaced !== undefined) this.remove(replaced);
    const group = this.#groups.get(node.key);
    if (group === undefined) this.#groups.set(node.key, node);
    else if (Array.isArray(group)) group.push(node);
    else this.#groups.set(node.key, [group, node]);
    this.#linkNewest(node);
    this.#entryCount += 1;
    this.#byteCount += node.sizeBytes;
    return replaced;
  }

  remove(node: N): void {
    const group = this.#groups.get(node.key);
    if (group === node) this.#groups.delete(node.key);
    else if (Array.isArray(group)) {
      const at = group.indexOf(node);
      if (at === -1) return;
      group.splice(at, 1);
      // Back to one variant: hold the node directly again, without the array.
      if (group.length === 1) this.#groups.set(node.key, group[0] as N);
    } else return;
    this.#unlink(node);
    this.#entryCount -= 1;
    this.#byteCount -= node.sizeBytes;
    node.sizeBytes = -1;
  }

  /** Marks `node` most recently used. */
  touch(node: N): void {
    if (this.#newest === node) return;
    this.#unlink(node);
    this.#linkNewest(node);
  }

  /** The least recently used node, the next eviction candidate. */
  oldest(): N | undefined {
    return this.#oldest ?? undefined;
  }

  /** Every node; removals made while iterating are skipped, never a crash. */
  *nodes(): Generator<N> {
    for (const group of this.#groups.values()) {
      if (!Array.isArray(group)) {
        if (group.sizeBytes >= 0) yield group;
        continue;
      }
      for (const node of [...group]) if (node.sizeBytes >= 0) yield node;
    }
  }

  #linkNewest(node: N): void {
    node.older = this.#newest;
    node.newer = null;
    if (this.#newest !== null) this.#newest.newer = node;
    this.#newest = node;
    if (this.#oldest === null) this.#oldest = node;
  }

  #unlink(node: N): void {
    if (node.newer !== null) node.newer.older = node.older;
    else this.#newest = node.older as N | null;
    if (node.older !== null) node.older.newer = node.newer;
    else this.#oldest = node.newer as N | null;
    node.newer = null;
    node.older = null;
  }
}
