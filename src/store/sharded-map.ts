// Maps and sets that may hold millions of items and lose most of them at once (a ban evicting a
// million hot entries). V8 shrinks a Map or Set by rehashing every item it still holds in one go, on
// the delete that crosses a quarter of its capacity: 140 ms for one delete from a Map of 680,000
// keys, which no slicing of the work around it can avoid. Split into SHARDS maps, each rehash moves
// a 64th of the items. The shard is picked by a hash of the key's end (keys share prefixes: the
// scheme and host of a URL), so a lookup costs one short loop more than a plain Map.

/** 64 shards: a million items rehash about 16,000 at a time, a few milliseconds. */
export const SHARDS = 64;
/** Characters hashed, from the end of the key: enough to spread URLs that differ only in a path. */
const HASHED_CHARS = 64;

/** The shard of a string key: FNV-1a over its length and its last HASHED_CHARS characters. */
export function shardOf(key: string): number {
  let hash = 0x811c9dc5 ^ key.length;
  for (let i = Math.max(0, key.length - HASHED_CHARS); i < key.length; i += 1) {
    hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  }
  return (hash >>> 0) % SHARDS;
}

/** A Map with string keys, sharded. Iteration visits shard after shard, each as a Map would. */
export class ShardedMap<V> {
  readonly #shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(key: string): V | undefined {
    return (this.#shards[shardOf(key)] as Map<string, V>).get(key);
  }

  has(key: string): boolean {
    return (this.#shards[shardOf(key)] as Map<string, V>).has(key);
  }

  set(key: string, value: V): void {
    const shard = this.#shards[shardOf(key)] as Map<string, V>;
    const before = shard.size;
    shard.set(key, value);
    this.#size += shard.size - before;
  }

  delete(key: string): boolean {
    const deleted = (this.#shards[shardOf(key)] as Map<string, V>).delete(key);
    if (deleted) this.#size -= 1;
    return deleted;
  }

  /** Live like a Map's: an item deleted before it is reached is skipped. */
  *values(): Generator<V> {
    for (const shard of this.#shards) yield* shard.values();
  }
}

/** Items a set holds in one plain Set before it is split into shards (a one-time move). */
const SHARD_FROM_ITEMS = 4096;

/**
 * A Set of objects that stays a plain Set while small (most surrogate keys tag a few entries) and is
 * split into shards, by a string the owner derives from each item, once it grows past
 * SHARD_FROM_ITEMS.
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
      // Split while iterated: the rest is in the shards (some items there were visited already).
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
    // Ends an iteration of the small set under way: it goes on in the shards, never over stale items.
    small.clear();
  }
}
