// Maps and sets that may hold millions of items and lose most of them at once (a ban evicting a
// million hot entries). V8 shrinks a Map or Set by rehashing every item it still holds in one go, on
// the delete that crosses a quarter of its capacity: 140 ms for one delete from a Map of 680,000
// keys, which no slicing of the work around it can avoid. Once past SHARD_FROM_ITEMS, a collection is
// split into SHARDS maps or sets, so that each rehash moves a 64th of the items. Below that it stays
// one plain Map or Set: a shard is picked by hashing the key in JavaScript (V8 caches its own string
// hash but does not expose it), which costs about 100 ns a lookup that small collections need not pay.

/** 64 shards: a million items rehash about 16,000 at a time, a few milliseconds. */
export const SHARDS = 64;
/** Items a collection holds before it is split: a plain one this size rehashes in about 2 ms. */
export const SHARD_FROM_ITEMS = 16_384;
/** Characters hashed, from the end of the key: URLs share their scheme and host and differ at the end. */
const HASHED_CHARS = 16;

/** The shard of a string key: FNV-1a over its length and its last HASHED_CHARS characters. */
export function shardOf(key: string): number {
  let hash = 0x811c9dc5 ^ key.length;
  for (let i = Math.max(0, key.length - HASHED_CHARS); i < key.length; i += 1) {
    hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  }
  return (hash >>> 0) % SHARDS;
}

/** A Map with string keys, sharded once large. Iteration visits shard after shard, each as a Map would. */
export class ShardedMap<V> {
  #small: Map<string, V> | undefined = new Map<string, V>();
  #shards: Map<string, V>[] | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(key: string): V | undefined {
    return this.#mapOf(key).get(key);
  }

  has(key: string): boolean {
    return this.#mapOf(key).has(key);
  }

  set(key: string, value: V): void {
    const map = this.#mapOf(key);
    const before = map.size;
    map.set(key, value);
    this.#size += map.size - before;
    if (this.#small !== undefined && this.#small.size > SHARD_FROM_ITEMS) this.#split(this.#small);
  }

  delete(key: string): boolean {
    const deleted = this.#mapOf(key).delete(key);
    if (deleted) this.#size -= 1;
    return deleted;
  }

  /** Live like a Map's: an item deleted before it is reached is skipped. */
  *values(): Generator<V> {
    if (this.#small !== undefined) {
      yield* this.#small.values();
      // Split while iterated: the rest is in the shards (some items there were visited already).
      if (this.#shards === undefined) return;
    }
    for (const shard of this.#shards ?? []) yield* shard.values();
  }

  #mapOf(key: string): Map<string, V> {
    return this.#small ?? ((this.#shards as Map<string, V>[])[shardOf(key)] as Map<string, V>);
  }

  #split(small: Map<string, V>): void {
    this.#shards = Array.from({ length: SHARDS }, () => new Map<string, V>());
    this.#small = undefined;
    for (const [key, value] of small) (this.#shards[shardOf(key)] as Map<string, V>).set(key, value);
    // Ends an iteration of the small map under way: it goes on in the shards, never over stale items.
    small.clear();
  }
}

/**
 * A Set of objects, sharded once large by a string the owner derives from each item (most surrogate
 * keys tag a few entries and stay one plain Set).
 */
export class ShardedSet<T> {
  readonly #shardKey: (item: T) => string;
  #small: Set<T> | undefined = new Set<T>();
  #shards: Set<T>[] | undefined;
  #size = 0;

  constructor(shardKey: (item: T) => string) {
    this.#shardKey = shardKey;
  }

  get size(): number {
    return this.#size;
  }

  add(item: T): void {
    const set = this.#setOf(item);
    const before = set.size;
    set.add(item);
    this.#size += set.size - before;
    if (this.#small !== undefined && this.#small.size > SHARD_FROM_ITEMS) this.#split(this.#small);
  }

  delete(item: T): boolean {
    const deleted = this.#setOf(item).delete(item);
    if (deleted) this.#size -= 1;
    return deleted;
  }

  /** Live like a Set's: an item deleted before it is reached is skipped. */
  *values(): Generator<T> {
    if (this.#small !== undefined) {
      yield* this.#small;
      if (this.#shards === undefined) return;
    }
    for (const shard of this.#shards ?? []) yield* shard;
  }

  #setOf(item: T): Set<T> {
    return this.#small ?? ((this.#shards as Set<T>[])[shardOf(this.#shardKey(item))] as Set<T>);
  }

  #split(small: Set<T>): void {
    this.#shards = Array.from({ length: SHARDS }, () => new Set<T>());
    this.#small = undefined;
    for (const item of small) (this.#shards[shardOf(this.#shardKey(item))] as Set<T>).add(item);
    small.clear();
  }
}
