// The cachecheck view reads what svc holds for a URL without changing the cache: looking a URL up
// for an operator must not keep its entry from eviction, as a request's lookup does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { CacheEntry } from '../../src/cache/entry.js';
import { keyOfUrl } from '../../src/invalidation/url-key.js';
import { TieredCache } from '../../src/store/tiered-cache.js';
import { createCacheCheck } from '../../src/node/cache-check.js';
import { createHotStore, hotEntryBytes } from '../../src/store/hot-store.js';
import { makeEntry } from '../store/entry-fixture.js';

test('a cachecheck leaves the eviction order as it was', async () => {
  const urls = [0, 1, 2, 3].map((i) => `http://example.com/${i}`);
  const [a, b, c, d] = urls.map((url) => makeEntry({ key: keyOfUrl(url)!, body: randomBytes(200) })) as [
    CacheEntry,
    CacheEntry,
    CacheEntry,
    CacheEntry,
  ];
  const cache = new TieredCache(createHotStore({ maxBytes: hotEntryBytes(a) * 3 }), undefined);
  const check = createCacheCheck({
    cache,
    isInvalidated: () => false,
    matchingBans: () => [],
    ownerOf: () => null,
    config: () => ({ routes: [], stale_if_unreachable: 0 }),
    now: () => a.responseTimeMs,
  });
  for (const entry of [a, b, c]) cache.store(entry);

  const seen = await check(urls[0]!);
  assert.equal(seen.variants.length, 1, 'the check sees the oldest entry');
  cache.store(d);

  assert.deepEqual(cache.hot.peek(a.key), [], 'the oldest entry is still the one evicted');
  for (const kept of [b, c, d]) assert.equal(cache.hot.peek(kept.key).length, 1);
});
