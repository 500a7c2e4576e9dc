import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidUrlError } from '../../src/invalidation/errors.js';
import { PURGE_WINDOW_MS } from '../../src/invalidation/create-invalidator.js';
import { diskSnapshot, entry, holds, openRig, serve, T0 } from './fixture.js';

const A = 'http://example.com/a';
const B = 'http://example.com/b';

describe('purge', () => {
  test('removes every variant of the URL from both tiers, durably, and nothing else', async () => {
    const rig = await openRig();
    try {
      for (const variantKey of ['', 'gzip', 'br']) rig.cache.store(entry({ key: A, variantKey }));
      rig.warm.put(entry({ key: A, variantKey: 'zstd' }));
      rig.cache.store(entry({ key: B }));
      const result = await rig.invalidator.purge(A);
      // Four distinct variants: three in both tiers (each counted once) and one only on disk.
      assert.equal(result.count, 4);
      assert.deepEqual(rig.hot.variants(A), []);
      assert.deepEqual(rig.warm.variants(A), []);
      assert.ok(holds(rig.hot, B) && holds(rig.warm, B));
      const onDisk = (await diskSnapshot(rig)).map((e) => e.key);
      assert.deepEqual(onDisk, [B], 'the purge reached the disk before it answered');
    } finally {
      await rig.cleanup();
    }
  });

  test('normalises the URL as the proxy keys it (scheme and host case, default port)', async () => {
    const rig = await openRig();
    try {
      rig.cache.store(entry({ key: A }));
      assert.equal((await rig.invalidator.purge('HTTP://Example.COM:80/a')).count, 1);
      assert.equal(holds(rig.hot, A), false);
    } finally {
      await rig.cleanup();
    }
  });

  test('rejects a URL that is not absolute http(s) with a host, changing nothing', async () => {
    const rig = await openRig();
    try {
      rig.cache.store(entry({ key: A }));
      for (const url of ['/a', 'example.com/a', 'ftp://example.com/a', 'mailto:ops@example.com', 'http://', 'not a url']) {
        await assert.rejects(rig.invalidator.purge(url), InvalidUrlError, url);
      }
      assert.ok(holds(rig.hot, A));
      assert.equal(rig.invalidator.counts().purge, 0);
      assert.deepEqual(rig.invalidator.recent(), []);
    } finally {
      await rig.cleanup();
    }
  });

  test('a batch purges the valid URLs and counts the others as failed', async () => {
    const rig = await openRig();
    try {
      rig.cache.store(entry({ key: A }));
      rig.cache.store(entry({ key: B, variantKey: 'gzip' }));
      rig.cache.store(entry({ key: B, variantKey: 'br' }));
      const result = await rig.invalidator.purgeBatch([A, 'ftp://example.com/x', 'relative/path', B, 'http://example.com/missing']);
      assert.deepEqual(result, { count: 3, failed: 2 });
      assert.equal(rig.hot.entryCount, 0);
      assert.equal(rig.warm.entryCount, 0);
      assert.equal(rig.invalidator.counts().purge_batch, 1);
      assert.deepEqual(rig.invalidator.recent()[0], { type: 'purge_batch', argument: '5 URLs', at: new Date(T0).toISOString(), count: 3 });
    } finally {
      await rig.cleanup();
    }
  });

  test('a fetch that began before the purge and stored after it is never served', async () => {
    const rig = await openRig();
    try {
      rig.clock.ms = T0 + 100;
      await rig.invalidator.purge(A);
      // The response of a fetch begun at T0+50 arrives after the purge and is stored in both tiers.
      rig.cache.store(entry({ key: A, variantKey: 'gzip', requestTimeMs: T0 + 50 }));
      rig.cache.store(entry({ key: A, variantKey: 'br', requestTimeMs: T0 + 150 }));
      assert.equal(serve(rig, A, 'gzip'), undefined);
      assert.equal(holds(rig.hot, A, 'gzip') || holds(rig.warm, A, 'gzip'), false, 'the lookup deleted what it hid');
      assert.equal(serve(rig, A, 'br')?.requestTimeMs, T0 + 150, 'a fetch begun after the purge is served');
    } finally {
      await rig.cleanup();
    }
  });

  test('when a purge record expires, what it still hid is deleted rather than served again', async () => {
    const rig = await openRig();
    try {
      rig.clock.ms = T0 + 100;
      await rig.invalidator.purge(A);
      rig.cache.store(entry({ key: A, variantKey: 'gzip', requestTimeMs: T0 + 50 }));
      rig.warm.put(entry({ key: A, variantKey: 'zstd', requestTimeMs: T0 + 60 }));
      rig.cache.store(entry({ key: A, variantKey: 'br', requestTimeMs: T0 + 150 }));
      rig.clock.ms = T0 + 100 + PURGE_WINDOW_MS - 1;
      assert.deepEqual(await rig.invalidator.pruneNow(), { bansPruned: 0, purgeRecordsPruned: 0, entriesDeleted: 0 });
      rig.clock.ms = T0 + 100 + PURGE_WINDOW_MS;
      // One record per scheme: a purge names the URL's http and https keys.
      assert.deepEqual(await rig.invalidator.pruneNow(), { bansPruned: 0, purgeRecordsPruned: 2, entriesDeleted: 2 });
      assert.equal(holds(rig.hot, A, 'gzip') || holds(rig.warm, A, 'gzip') || holds(rig.warm, A, 'zstd'), false);
      assert.ok(serve(rig, A, 'br'));
    } finally {
      await rig.cleanup();
    }
  });

  test('purge records are bounded: past the bound the oldest expires early, deleting what it hid', async () => {
    // Two purges fit: each records its URL's http and https keys.
    const rig = await openRig({ engine: { maxPurgeRecords: 4 } });
    try {
      rig.clock.ms = T0 + 100;
      await rig.invalidator.purge(A);
      rig.cache.store(entry({ key: A, requestTimeMs: T0 + 50 }));
      await rig.invalidator.purge('http://example.com/c');
      assert.ok(holds(rig.hot, A), 'two records fit');
      await rig.invalidator.purge('http://example.com/d');
      assert.equal(holds(rig.hot, A) || holds(rig.warm, A), false);
    } finally {
      await rig.cleanup();
    }
  });
});
