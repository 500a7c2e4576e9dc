// The sharded collections behind the hot tier's index and the tag index: they answer as a Map or a
// Set would, across the split into shards, and spread URL keys evenly.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SHARD_FROM_ITEMS, SHARDS, ShardedMap, ShardedSet, shardOf } from '../../src/store/sharded-map.js';

const key = (i: number): string => `http://shop-${i % 50}.example/catalogue/item-${i}?page=${i % 7}`;

describe('sharded collections', () => {
  test('a ShardedMap answers as a Map, below and above the split', () => {
    const sharded = new ShardedMap<number>();
    const plain = new Map<string, number>();
    const count = SHARD_FROM_ITEMS * 3;
    for (let i = 0; i < count; i += 1) {
      sharded.set(key(i), i);
      plain.set(key(i), i);
      if (i % 3 === 0) sharded.set(key(i), -i);
      if (i % 3 === 0) plain.set(key(i), -i);
    }
    for (let i = 0; i < count; i += 5) {
      assert.equal(sharded.delete(key(i)), plain.delete(key(i)));
    }
    assert.equal(sharded.delete('absent'), false);
    assert.equal(sharded.size, plain.size);
    for (let i = 0; i < count; i += 1) {
      assert.equal(sharded.get(key(i)), plain.get(key(i)), key(i));
      assert.equal(sharded.has(key(i)), plain.has(key(i)));
    }
    assert.deepEqual([...sharded.values()].sort((a, b) => a - b), [...plain.values()].sort((a, b) => a - b));
  });

  test('iterating across the split visits every item, and none that was deleted', () => {
    const sharded = new ShardedMap<number>();
    for (let i = 0; i < SHARD_FROM_ITEMS - 10; i += 1) sharded.set(key(i), i);
    const visited = new Set<number>();
    let added = SHARD_FROM_ITEMS - 10;
    for (const value of sharded.values()) {
      visited.add(value);
      // Grow past the split while iterating, and delete an item not visited yet.
      if (added < SHARD_FROM_ITEMS + 100) sharded.set(key(added), added++);
      if (value === 5) sharded.delete(key(1000));
    }
    for (let i = 0; i < SHARD_FROM_ITEMS - 10; i += 1) if (i !== 1000) assert.ok(visited.has(i), `item ${i} visited`);
    assert.ok(!visited.has(1000), 'the item deleted before it was reached is not visited');
  });

  test('a ShardedSet answers as a Set, below and above the split', () => {
    const items = Array.from({ length: SHARD_FROM_ITEMS * 2 }, (_, i) => ({ key: key(i) }));
    const sharded = new ShardedSet<{ key: string }>((item) => item.key);
    for (const item of items) sharded.add(item);
    sharded.add(items[0] as { key: string });
    assert.equal(sharded.size, items.length);
    for (const item of items.slice(0, 100)) assert.equal(sharded.delete(item), true);
    assert.equal(sharded.delete(items[0] as { key: string }), false);
    assert.equal(sharded.size, items.length - 100);
    assert.deepEqual(new Set(sharded.values()), new Set(items.slice(100)));
  });

  test('URL keys spread over the shards: none holds twice its share', () => {
    const counts = new Array<number>(SHARDS).fill(0);
    const total = 100_000;
    for (let i = 0; i < total; i += 1) counts[shardOf(key(i))] = (counts[shardOf(key(i))] as number) + 1;
    assert.ok(Math.max(...counts) < (2 * total) / SHARDS, `largest shard ${Math.max(...counts)}`);
  });
});
