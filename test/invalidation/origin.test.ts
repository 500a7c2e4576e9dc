// Invalidations made elsewhere (another node, or this node before a restart) are applied as of the
// time they were made, under their own id: what was fetched after them stays, a ban delivered twice
// is kept once, and one made long ago expires when its 24 hours are up, not 24 hours after delivery.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BAN_RETENTION_MS } from '../../src/invalidation/create-invalidator.js';
import { entry, holds, HOUR_MS, openRig, serve, T0 } from './fixture.js';

const A = 'http://example.com/a';

describe('invalidations made elsewhere', () => {
  test('a purge made earlier removes only the variants fetched before it', async () => {
    const rig = await openRig({ startMs: T0 + 10 * HOUR_MS });
    try {
      rig.cache.store(entry({ key: A, variantKey: 'old', requestTimeMs: T0 }));
      rig.cache.store(entry({ key: A, variantKey: 'new', requestTimeMs: T0 + 2 * HOUR_MS }));
      const result = await rig.invalidator.purge(A, { id: 'p-1', atMs: T0 + HOUR_MS });
      assert.equal(result.count, 1);
      assert.equal(holds(rig.hot, A, 'old') || holds(rig.warm, A, 'old'), false, 'fetched before the purge: gone');
      assert.ok(serve(rig, A, 'new'), 'fetched after the purge: still served');
    } finally {
      await rig.cleanup();
    }
  });

  test('a refresh made earlier marks stale only what was fetched before it', async () => {
    const rig = await openRig({ startMs: T0 + 10 * HOUR_MS });
    try {
      rig.cache.store(entry({ key: A, variantKey: 'old', requestTimeMs: T0 }));
      rig.cache.store(entry({ key: A, variantKey: 'new', requestTimeMs: T0 + 2 * HOUR_MS }));
      assert.equal((await rig.invalidator.refresh(A, { id: 'r-1', atMs: T0 + HOUR_MS })).count, 1);
      assert.equal(rig.hot.variants(A).find((e) => e.variantKey === 'old')?.forcedStale, true);
      assert.equal(rig.hot.variants(A).find((e) => e.variantKey === 'new')?.forcedStale, false);
    } finally {
      await rig.cleanup();
    }
  });

  test('a ban keeps the id and time it was made with, once, in creation order among the others', async () => {
    const rig = await openRig({ startMs: T0 + 10 * HOUR_MS });
    try {
      await rig.invalidator.ban({ surrogate_key: 'local' });
      await rig.invalidator.ban({ path_regex: '^/x' }, { id: 'remote-1', atMs: T0 + HOUR_MS });
      await rig.invalidator.ban({ path_regex: '^/x' }, { id: 'remote-1', atMs: T0 + HOUR_MS });
      const bans = rig.invalidator.activeBans();
      assert.deepEqual(
        bans.map((ban) => [ban.id === 'remote-1' ? 'remote-1' : 'local', ban.created_at]),
        [
          ['remote-1', new Date(T0 + HOUR_MS).toISOString()],
          ['local', new Date(T0 + 10 * HOUR_MS).toISOString()],
        ],
      );
      assert.equal(bans[0]!.expires_at, new Date(T0 + HOUR_MS + BAN_RETENTION_MS).toISOString(), 'it expires 24 h after it was made');
      // An entry fetched between the two bans: the old one does not hide it.
      rig.cache.store(entry({ key: 'http://example.com/x', requestTimeMs: T0 + 2 * HOUR_MS }));
      assert.ok(serve(rig, 'http://example.com/x'));
      // The lazy check still finds the older ban behind the newer one.
      rig.cache.store(entry({ key: 'http://example.com/x2', requestTimeMs: T0 }));
      assert.equal(serve(rig, 'http://example.com/x2'), undefined);
    } finally {
      await rig.cleanup();
    }
  });

  test('a ban delivered again after a restart is not journaled twice', async () => {
    const rig = await openRig({ startMs: T0 });
    const dir = rig.dir;
    try {
      await rig.invalidator.ban({ surrogate_key: 'p' }, { id: 'remote-2', atMs: T0 - 1000 });
      await rig.close();
      const again = await openRig({ dir, startMs: T0 + HOUR_MS });
      try {
        await again.invalidator.ban({ surrogate_key: 'p' }, { id: 'remote-2', atMs: T0 - 1000 });
        assert.equal(again.invalidator.activeBans().length, 1);
      } finally {
        await again.close();
      }
      const third = await openRig({ dir, startMs: T0 + 2 * HOUR_MS });
      assert.equal(third.invalidator.activeBans().length, 1, 'the journal holds it once');
      await third.cleanup();
    } finally {
      await rig.close();
    }
  });

  test('a ban made more than 24 hours ago is not applied', async () => {
    const rig = await openRig({ startMs: T0 + BAN_RETENTION_MS + HOUR_MS });
    try {
      rig.cache.store(entry({ key: A, tags: ['t'], requestTimeMs: T0 - HOUR_MS }));
      assert.equal((await rig.invalidator.ban({ surrogate_key: 't' }, { id: 'old', atMs: T0 })).count, 0);
      assert.deepEqual(rig.invalidator.activeBans(), []);
    } finally {
      await rig.cleanup();
    }
  });
});
