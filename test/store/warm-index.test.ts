// The warm tier keeps its index in lmdb, not in memory (issue 29 item 2): what used to come from an
// index rebuilt at open now comes from the tables at once, across restarts. Eviction follows the
// recency table, the byte bound holds while the write queue is full, the vary cap counts the variants
// on disk, a store reopened over many keys answers its first lookup at once, and the sweeps' walks
// tolerate deletes written while they pause.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entrySizeBytes } from '../../src/cache/entry.js';
import { MAX_VARIANTS } from '../../src/store/cache-store.js';
import { openWarmStore, type WarmStore, type WarmStoreOptions } from '../../src/store/warm/warm-store.js';
import { assertSameEntry, makeEntry } from './entry-fixture.js';

async function withDir(run: (path: string) => Promise<void>): Promise<void> {
  const path = await mkdtemp(join(tmpdir(), 'svc-warm-index-'));
  try {
    await run(path);
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}

function open(path: string, options: Partial<WarmStoreOptions> = {}): Promise<WarmStore> {
  return openWarmStore({ path, maxBytes: 64 * 1024 * 1024, writeQueueLength: 10_000, ...options });
}

const keyOf = (i: number): string => `https://example.com/item/${i}`;

describe('warm tier index in lmdb', () => {
  test('eviction after a restart takes the least recently used first, in order, by the access times on disk', () =>
    withDir(async (path) => {
      let nowMs = 10_000_000;
      const now = (): number => nowMs;
      const entries = [0, 1, 2, 3, 4].map((i) => makeEntry({ key: keyOf(i), body: randomBytes(100) }));
      const size = entrySizeBytes(entries[0]!);
      const first = await open(path, { maxBytes: size * 5, now });
      for (const entry of entries) {
        assert.equal(first.put(entry), 'stored');
        nowMs += 1_000;
      }
      await first.flush();
      // Uses more than a minute after the stored access time are written: 3, then 0, then 1.
      for (const used of [3, 0, 1]) {
        nowMs += 120_000;
        assert.equal(first.variants(keyOf(used)).length, 1);
      }
      await first.close();

      const second = await open(path, { maxBytes: size * 5, now });
      assert.equal(second.entryCount, 5);
      const evicted: number[] = [];
      for (let i = 10; i < 15; i += 1) {
        nowMs += 1_000;
        assert.equal(second.put(makeEntry({ key: keyOf(i), body: randomBytes(100) })), 'stored');
        evicted.push(...[0, 1, 2, 3, 4].filter((old) => !evicted.includes(old) && !second.has(keyOf(old), '')));
        assert.ok(second.byteCount <= size * 5);
      }
      assert.deepEqual(evicted, [2, 4, 3, 0, 1], 'never used, oldest first, then by the last use on disk');
      await second.close();
    }));

  test('the byte bound holds while the write queue is full, and on disk after a restart', () =>
    withDir(async (path) => {
      const size = entrySizeBytes(makeEntry({ key: keyOf(0), body: randomBytes(300) }));
      const maxBytes = size * 20;
      const store = await open(path, { maxBytes, writeQueueLength: 8 });
      let stored = 0;
      let dropped = 0;
      for (let round = 0; round < 10; round += 1) {
        // More puts in one turn than the queue takes: the rest are dropped.
        for (let i = 0; i < 30; i += 1) {
          const outcome = store.put(makeEntry({ key: keyOf(round * 30 + i), body: randomBytes(300) }));
          if (outcome === 'stored') stored += 1;
          else if (outcome === 'dropped') dropped += 1;
          assert.ok(store.byteCount <= maxBytes, `${store.byteCount} bytes held, at most ${maxBytes}`);
        }
        await store.flush();
      }
      assert.ok(dropped > 0 && stored > 20, `${stored} stored, ${dropped} dropped`);
      assert.equal(store.droppedWrites, dropped);
      await store.close();

      const reopened = await open(path, { maxBytes });
      const held = [...reopened.entries()];
      assert.equal(reopened.entryCount, held.length);
      assert.equal(reopened.byteCount, held.reduce((sum, entry) => sum + entrySizeBytes(entry), 0));
      // Full to within an entry (keys, and so sizes, differ by a few bytes).
      assert.ok(reopened.byteCount <= maxBytes && reopened.byteCount > maxBytes - 2 * size, `${held.length} entries, ${reopened.byteCount} bytes`);
      await reopened.close();
    }));

  test(`the vary cap counts the variants on disk: a reopened key with ${MAX_VARIANTS} refuses one more`, () =>
    withDir(async (path) => {
      const key = 'https://example.com/varied';
      const first = await open(path);
      for (let i = 0; i < MAX_VARIANTS; i += 1) assert.equal(first.put(makeEntry({ key, variantKey: `v${i}` })), 'stored');
      await first.close();

      const second = await open(path);
      assert.equal(second.put(makeEntry({ key, variantKey: 'one-too-many' })), 'vary_cap');
      const replacement = makeEntry({ key, variantKey: 'v3', body: randomBytes(20) });
      assert.equal(second.put(replacement), 'stored', 'replacing a variant on disk is allowed');
      assert.equal(second.delete(key, 'v5'), 1);
      const added = makeEntry({ key, variantKey: 'new' });
      assert.equal(second.put(added), 'stored', 'a delete waiting for disk frees a place');
      assert.equal(second.put(makeEntry({ key, variantKey: 'newer' })), 'vary_cap');
      assert.equal(second.peek(key).length, MAX_VARIANTS);
      assertSameEntry(second.peek(key)[0], added);
      await second.close();
    }));

  test('a store reopened over 100,000 keys answers a lookup as soon as it is open', { timeout: 120_000 }, () =>
    withDir(async (path) => {
      const count = 100_000;
      const filling = await open(path, { writeQueueLength: count });
      for (let i = 0; i < count; i += 1) filling.put(makeEntry({ key: keyOf(i), body: Buffer.from(`body ${i}`) }));
      await filling.close();

      const store = await open(path);
      // No await between the open and the lookups: nothing is built in the background.
      assert.equal(store.entryCount, count);
      assert.equal(store.openReport.entryCount, count);
      for (const i of [0, 4_242, count - 1]) {
        const [found] = store.variants(keyOf(i));
        assert.equal(found?.body.toString(), `body ${i}`);
      }
      assert.deepEqual(store.variants(keyOf(count)), []);
      assert.equal(store.has(keyOf(77), ''), true);
      await store.close();
    }));

  test('summaries() and entries() skip what is deleted while they pause, even once written, and see waiting puts', () =>
    withDir(async (path) => {
      const store = await open(path);
      for (let i = 0; i < 50; i += 1) store.put(makeEntry({ key: keyOf(i) }));
      await store.flush();
      const waiting = makeEntry({ key: keyOf(1_000) });
      store.put(waiting);

      for (const walk of ['summaries', 'entries'] as const) {
        const visited = new Set<string>();
        let deletedAll = false;
        for (const item of store[walk]()) {
          assert.ok(!visited.has(item.key), `${item.key} visited twice`);
          visited.add(item.key);
          if (!deletedAll) {
            // Every other entry goes, and the deletes reach disk while the walk pauses.
            for (let i = 0; i < 50; i += 2) store.delete(keyOf(i));
            deletedAll = true;
            await store.flush();
          }
        }
        const evens = [...visited].filter((key) => key !== waiting.key && Number(key.split('/').pop()) % 2 === 0);
        assert.ok(evens.length <= 1, `${walk}: deleted entries visited: ${evens.join(', ')}`);
        assert.ok(visited.has(waiting.key), `${walk}: the waiting put was seen`);
        // The odd ones all stay and are visited.
        for (let i = 1; i < 50; i += 2) assert.ok(visited.has(keyOf(i)), `${walk}: ${keyOf(i)} visited`);
      }
      assert.equal(store.entryCount, 26);
      await store.close();
    }));
});
