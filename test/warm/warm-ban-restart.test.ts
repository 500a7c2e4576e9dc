// A ban by surrogate key over warm entries after a restart (issue 29 item 2): with the index in lmdb,
// the restarted tier's entries carry their tags from the first lookup, so the ban hides them at once,
// and the retention sweep finds and deletes every one of them by reading index records only.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BAN_RETENTION_MS } from '../../src/invalidation/create-invalidator.js';
import { entry, openRig, serve, T0 } from '../invalidation/fixture.js';

const COUNT = 400;
const keyOf = (i: number): string => `http://shop.example/item/${i}`;
/** Looked up after the ban: the tagged ones among them are deleted by the lookup's check. */
const LOOKED_UP = [0, 1, 2, 3, COUNT - 2, COUNT - 1];

describe('a ban by tag over a restarted warm tier', () => {
  test('hides the tagged warm entries at once and its sweep deletes them, reading no record', async () => {
    const first = await openRig();
    try {
      for (let i = 0; i < COUNT; i += 1) first.warm.put(entry({ key: keyOf(i), tags: i % 2 === 0 ? ['sale', `item-${i}`] : [`item-${i}`] }));
      await first.close();

      const restarted = await openRig({ dir: first.dir, startMs: T0 + 1_000 });
      try {
        assert.equal(restarted.hot.entryCount, 0, 'only the warm tier holds them');
        assert.equal(restarted.warm.entryCount, COUNT);
        await restarted.invalidator.ban({ surrogate_key: 'sale' });
        for (const i of LOOKED_UP) {
          assert.equal(serve(restarted, keyOf(i)) === undefined, i % 2 === 0, `${keyOf(i)} ${i % 2 === 0 ? 'hidden' : 'served'}`);
        }
      } finally {
        await restarted.close();
      }

      const later = await openRig({ dir: first.dir, startMs: T0 + 1_000 + BAN_RETENTION_MS });
      try {
        const healsBefore = later.warm.selfHeals;
        const report = await later.invalidator.pruneNow();
        assert.equal(report.bansPruned, 1);
        assert.equal(report.entriesDeleted, COUNT / 2 - LOOKED_UP.filter((i) => i % 2 === 0).length, 'every tagged entry not looked up');
        assert.equal(later.warm.entryCount, COUNT / 2);
        for (let i = 0; i < COUNT; i += 1) assert.equal(later.warm.has(keyOf(i), ''), i % 2 === 1, keyOf(i));
        assert.equal(later.warm.selfHeals, healsBefore, 'no record was read');
      } finally {
        await later.close();
      }
    } finally {
      await first.cleanup();
    }
  });
});
