import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diskSnapshot, entry, openRig, T0 } from './fixture.js';

const A = 'http://example.com/a';

test('refresh marks every variant stale in both tiers, durably, and the tag index follows', async () => {
  const rig = await openRig();
  try {
    rig.cache.store(entry({ key: A, variantKey: 'gzip', tags: ['t'] }));
    rig.cache.store(entry({ key: A, variantKey: 'br', tags: ['t'] }));
    rig.warm.put(entry({ key: A, variantKey: 'zstd', tags: ['t'] }));
    rig.cache.store(entry({ key: 'http://example.com/b', tags: ['t'] }));
    assert.equal((await rig.invalidator.refresh(A)).count, 3);
    assert.deepEqual(rig.hot.variants(A).map((e) => [e.variantKey, e.forcedStale]).sort(), [
      ['br', true],
      ['gzip', true],
    ]);
    assert.deepEqual(rig.warm.variants(A).map((e) => [e.variantKey, e.forcedStale]).sort(), [
      ['br', true],
      ['gzip', true],
      ['zstd', true],
    ]);
    assert.equal(rig.hot.variants('http://example.com/b')[0]?.forcedStale, false);
    assert.equal(rig.invalidator.counts().refresh, 1);
    // The refreshed hot entries replaced the old objects: a ban on their tag still finds them.
    rig.clock.ms = T0 + 1000;
    assert.equal((await rig.invalidator.ban({ surrogate_key: 't' })).count, 3);
  } finally {
    await rig.cleanup();
  }
});

test('refresh reaches the disk before it answers', async () => {
  const rig = await openRig();
  try {
    rig.cache.store(entry({ key: A }));
    await rig.invalidator.refresh(A);
    assert.deepEqual(
      (await diskSnapshot(rig)).map((e) => e.forcedStale),
      [true],
    );
  } finally {
    await rig.cleanup();
  }
});
