// The warm tier joining the cache once its index is rebuilt (src/cache/warm-join.ts), with a real hot
// store and a real lmdb warm store whose index is still being rebuilt: until it joins the cache
// neither reads nor writes it, and every invalidation made meanwhile reaches it when it joins.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CacheEntry } from '../../src/cache/entry.js';
import { TieredCache, variantWithKey } from '../../src/cache/tiered-cache.js';
import { createHotStore } from '../../src/store/hot-store.js';
import { beginWarmStore, LOAD_CHUNK_RECORDS, openWarmStore, type WarmStoreOptions } from '../../src/store/warm/warm-store.js';
import { makeEntry } from '../store/entry-fixture.js';

/** Enough records that the rebuild takes several turns of the event loop. */
const FILLER = 3 * LOAD_CHUNK_RECORDS;
const FETCHED_MS = 1_700_000_000_000;

const entry = (path: string): CacheEntry => ({ ...makeEntry({ key: `https://example.com/${path}`, body: Buffer.from(path) }), requestTimeMs: FETCHED_MS });

describe('a warm tier that joins the cache when indexed', () => {
  let dir: string;
  let options: WarmStoreOptions;
  const held = ['purged', 'refreshed', 'fetched-before', 'fetched-after', 'untouched'];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-warm-join-'));
    options = { path: join(dir, 'warm'), maxBytes: 64 * 1024 * 1024, writeQueueLength: FILLER + 10 };
    const filling = await openWarmStore(options);
    for (const path of held) filling.put(entry(path));
    for (let i = 0; i < FILLER; i++) filling.put(entry(`filler-${i}`));
    await filling.close();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const lookup = (cache: TieredCache, path: string) => cache.lookup(`https://example.com/${path}`, variantWithKey, '');

  test('out of lookups and stores until then; purges, refreshes and expiring purge records made meanwhile apply when it joins', async () => {
    const warm = await beginWarmStore(options);
    const cache = new TieredCache(createHotStore({ maxBytes: 1024 * 1024 }), warm, warm.indexed);
    try {
      assert.equal(cache.warm, undefined);
      assert.equal(lookup(cache, 'untouched'), undefined, 'a miss while the tier is out');
      cache.store(entry('stored-meanwhile'));
      cache.deleteVariants('https://example.com/purged');
      cache.rewriteVariants('https://example.com/refreshed', (stale) => ({ ...stale, forcedStale: true }));
      cache.deleteFetchedBy('https://example.com/fetched-before', FETCHED_MS);
      cache.deleteFetchedBy('https://example.com/fetched-after', FETCHED_MS - 1);
      assert.ok(warm.entryCount < FILLER, 'all of this happened while the index was being rebuilt');

      await cache.warmJoined;
      assert.equal(cache.warm, warm);
      assert.equal(lookup(cache, 'untouched')?.source, 'warm');
      assert.equal(lookup(cache, 'fetched-after')?.source, 'warm', 'fetched after the purge record: kept');
      for (const path of ['purged', 'refreshed', 'fetched-before']) {
        assert.equal(lookup(cache, path), undefined, `${path} is gone from the joined tier`);
        assert.equal(warm.has(`https://example.com/${path}`, ''), false);
      }
      assert.equal(lookup(cache, 'stored-meanwhile')?.source, 'hot');
      assert.equal(warm.has('https://example.com/stored-meanwhile', ''), false, 'nothing was written to the tier while it was out');
    } finally {
      await warm.close();
    }
  });

  test('a tier closed before its index is rebuilt never joins, and the cache serves on without it', async () => {
    const warm = await beginWarmStore(options);
    const cache = new TieredCache(createHotStore({ maxBytes: 1024 * 1024 }), warm, warm.indexed);
    await warm.close();
    await cache.warmJoined;
    assert.equal(cache.warm, undefined);
    cache.store(entry('after-close'));
    assert.equal(lookup(cache, 'after-close')?.source, 'hot');
  });
});
