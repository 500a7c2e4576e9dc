// Issue 15 item 4: a ban's eager eviction (the lurker) walks the hot tier in slices that yield to the
// event loop; the lazy check hides every match meanwhile; the answer's `count` is what the walk
// evicted; and each ban keeps counters of what it matched, eagerly and lazily.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CacheEntry } from '../../src/cache/entry.js';
import { entry, openRig, serve, T0, type Rig } from './fixture.js';

/** Enough entries that a walk lasts many slices of a few milliseconds on any machine. */
const MANY = 10_000;

function fillMatching(rig: Rig, prefix: string, count: number): void {
  for (let i = 0; i < count; i += 1) rig.cache.store(entry({ key: `http://a.com/${prefix}/${i}` }));
}

function held(rig: Rig, prefix: string): CacheEntry[] {
  return [...rig.hot.entries()].filter((e) => e.key.startsWith(`http://a.com/${prefix}/`));
}

describe('the ban lurker', () => {
  test('a ban over many hot entries lets other work run before it answers; the lazy check hides what it has not reached', async () => {
    const rig = await openRig({ noJournal: true, hotMaxBytes: 512 * 1024 * 1024 });
    try {
      fillMatching(rig, 'm', MANY);
      fillMatching(rig, 'kept', 100);
      rig.clock.ms = T0 + 1000;
      let answered = false;
      const banned = rig.invalidator.ban({ path_regex: '^/m/' }).then((result) => {
        answered = true;
        return result;
      });
      // Runs on the event loop's next turn: only if the walk yielded before finishing.
      await nextTurn();
      assert.equal(answered, false);
      const notYetEvicted = held(rig, 'm');
      assert.ok(notYetEvicted.length > 0 && notYetEvicted.length < MANY, `the walk is under way: ${notYetEvicted.length} left`);
      for (const stillHeld of notYetEvicted) assert.equal(rig.invalidator.isInvalidated(stillHeld), true, stillHeld.key);
      assert.ok(serve(rig, 'http://a.com/kept/1'));

      const { count } = await banned;
      assert.equal(held(rig, 'm').length, 0);
      assert.equal(held(rig, 'kept').length, 100);
      // What the walk evicted, plus what the lookups above hid first (they do not delete here).
      assert.equal(count, MANY);
      const [ban] = rig.invalidator.activeBans();
      assert.equal(ban?.evicted, MANY);
      assert.equal(ban?.hidden, notYetEvicted.length);
    } finally {
      await rig.cleanup();
    }
  });

  test('bans that arrive while a walk runs are walked next, and each answer counts its own evictions', async () => {
    const rig = await openRig({ noJournal: true, hotMaxBytes: 512 * 1024 * 1024 });
    try {
      fillMatching(rig, 'first', MANY);
      fillMatching(rig, 'second', 500);
      rig.cache.store(entry({ key: 'http://a.com/tagged', tags: ['t'] }));
      rig.clock.ms = T0 + 1000;
      const first = rig.invalidator.ban({ path_regex: '^/first/' });
      const second = rig.invalidator.ban({ path_regex: '^/second/' });
      const third = rig.invalidator.ban({ surrogate_key: 't' });
      assert.deepEqual(
        (await Promise.all([first, second, third])).map((result) => result.count),
        [MANY, 500, 1],
      );
      assert.equal(rig.hot.entryCount, 0);
      assert.deepEqual(Object.fromEntries(rig.invalidator.recent().map((r) => [r.argument, r.count])), {
        'path_regex=^/first/': MANY,
        'path_regex=^/second/': 500,
        'surrogate_key=t': 1,
      });
    } finally {
      await rig.cleanup();
    }
  });

  test('stop() during a walk answers the ban with what was evicted so far; the ban still hides the rest', async () => {
    const rig = await openRig({ noJournal: true, hotMaxBytes: 512 * 1024 * 1024 });
    try {
      fillMatching(rig, 'm', MANY);
      rig.clock.ms = T0 + 1000;
      const banned = rig.invalidator.ban({ path_regex: '^/m/' });
      await nextTurn();
      await rig.invalidator.stop();
      const { count } = await banned;
      const left = held(rig, 'm');
      assert.equal(count + left.length, MANY);
      assert.ok(left.length > 0, 'the walk was abandoned');
      for (const stillHeld of left.slice(0, 100)) assert.equal(rig.invalidator.isInvalidated(stillHeld), true);
    } finally {
      await rig.cleanup();
    }
  });

  test('a ban counts the lookups it hid lazily: fetches in flight when it came, and warm entries', async () => {
    const rig = await openRig();
    try {
      rig.clock.ms = T0 + 1000;
      assert.equal((await rig.invalidator.ban({ host_regex: '^a\\.com$' })).count, 0);
      await rig.invalidator.ban({ host_regex: '^b\\.com$' });
      // Began before the ban, stored after it.
      rig.cache.store(entry({ key: 'http://a.com/raced', requestTimeMs: T0 + 500 }));
      rig.warm.put(entry({ key: 'http://a.com/warm', requestTimeMs: T0 }));
      rig.cache.store(entry({ key: 'http://a.com/after', requestTimeMs: T0 + 2000 }));
      assert.equal(serve(rig, 'http://a.com/raced'), undefined);
      assert.equal(serve(rig, 'http://a.com/warm'), undefined);
      assert.ok(serve(rig, 'http://a.com/after'));
      assert.deepEqual(
        rig.invalidator.activeBans().map((ban) => [ban.host_regex, ban.evicted, ban.hidden]),
        [
          ['^a\\.com$', 0, 2],
          ['^b\\.com$', 0, 0],
        ],
      );
    } finally {
      await rig.cleanup();
    }
  });
});
