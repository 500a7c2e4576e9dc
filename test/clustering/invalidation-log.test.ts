// The invalidation log: what it keeps (compaction depends on the set seen, not on the order), how far
// back it reaches, its digest, and its records surviving a restart through a store.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidationLog, BUCKET_MS } from '../../src/clustering/invalidation-log.js';
import type { InvalidationMessage } from '../../src/clustering/invalidation-message.js';
import { CLUSTER_LOG_FILE_NAME, MemoryLogStore, openFileLogStore } from '../../src/clustering/log-stores.js';

const T0 = 1_700_000_000_000;
const HOUR_MS = 3_600_000;

function newLog(options: { now?: () => number; maxWeight?: number; store?: MemoryLogStore } = {}): InvalidationLog {
  return InvalidationLog.restore([], { store: options.store ?? new MemoryLogStore(), keyOf: (url) => url, now: options.now ?? (() => T0 + HOUR_MS), ...(options.maxWeight ? { maxWeight: options.maxWeight } : {}) });
}

async function addAll(log: InvalidationLog, messages: readonly InvalidationMessage[]): Promise<void> {
  for (const message of messages) if (!log.knows(message)) await log.add(message);
}

const purge = (id: string, at: number, url = 'http://a/x'): InvalidationMessage => ({ id, at, type: 'purge', url });
const refresh = (id: string, at: number, url = 'http://a/x'): InvalidationMessage => ({ id, at, type: 'refresh', url });
const ban = (id: string, at: number, tag = 't'): InvalidationMessage => ({ id, at, type: 'ban', surrogate_key: tag });

describe('invalidation log', () => {
  test('a newer purge covers older purges and refreshes of its URL; refreshes and bans cover their own kind', async () => {
    const log = newLog();
    await addAll(log, [purge('p1', T0), refresh('r1', T0 + 10), ban('b1', T0), ban('b2', T0 + 5), purge('p2', T0 + 20)]);
    assert.deepEqual(
      log.messagesIn(log.digest().map((d) => d.bucket), 1_000).messages.map((m) => m.id).sort(),
      ['b2', 'p2'],
    );
    assert.equal(log.knows(purge('p1', T0)), true, 'covered: nothing to apply');
    assert.equal(log.knows(refresh('r0', T0 + 19)), true, 'a refresh older than a purge adds nothing');
    assert.equal(log.knows(refresh('r2', T0 + 21)), false, 'a later refresh does');
    assert.equal(log.knows({ id: 'batch', at: T0, type: 'purge_batch', urls: ['http://a/x'] }), false, 'batches are kept whole');
  });

  test('an invalidation covered while it was being applied is not held over the newer one', async () => {
    // Found by invalidation-faults (seed 31): a purge checked as new, applied, and added after a newer
    // purge of the same URL had been added dropped the newer one, and was itself dropped later: the
    // node then applied the newer one a second time.
    const log = newLog();
    const older = purge('older', T0);
    assert.equal(log.knows(older), false);
    await log.add(purge('newer', T0 + 10));
    await log.add(older);
    assert.equal(log.holds('newer'), true);
    assert.equal(log.holds('older'), false);
    assert.equal(log.knows(purge('newer', T0 + 10)), true);
  });

  test('what it holds, and its digest, depend on the set of invalidations seen, not their order', async () => {
    const message = fc
      .tuple(fc.constantFrom('purge', 'refresh', 'ban'), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 5 * BUCKET_MS }), fc.integer({ min: 0, max: 1e6 }))
      .map(([type, target, offset, n]): InvalidationMessage => {
        const id = `${type}-${target}-${offset}-${n}`;
        if (type === 'ban') return ban(id, T0 + offset, `tag-${target}`);
        return type === 'purge' ? purge(id, T0 + offset, `http://a/${target}`) : refresh(id, T0 + offset, `http://a/${target}`);
      });
    await fc.assert(
      fc.asyncProperty(fc.array(message, { maxLength: 40 }), fc.infiniteStream(fc.nat()), async (messages, shuffle) => {
        const forward = newLog();
        await addAll(forward, messages);
        const shuffled = [...messages];
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = shuffle.next().value % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        const other = newLog();
        await addAll(other, shuffled);
        assert.deepEqual(other.digest(), forward.digest());
      }),
      { numRuns: 200 },
    );
  });

  test('past its bound in URLs it drops the oldest and reaches back no further', async () => {
    const log = newLog({ maxWeight: 3 });
    await log.setCompleteSince(T0 - HOUR_MS);
    await addAll(log, [purge('a', T0 + 1, 'http://a/1'), purge('b', T0 + 2, 'http://a/2'), purge('c', T0 + 3, 'http://a/3')]);
    assert.equal(log.coverageMs(), T0 - HOUR_MS);
    await addAll(log, [{ id: 'd', at: T0 + 4, type: 'purge_batch', urls: ['http://a/4', 'http://a/5'] }]);
    assert.equal(log.weight, 3);
    assert.equal(log.holds('a') || log.holds('b'), false);
    assert.equal(log.coverageMs(), T0 + 2, 'coverage moves to the newest one dropped');
  });

  test('what is older than the window is known (never applied) and not held', async () => {
    let now = T0;
    const log = newLog({ now: () => now });
    await addAll(log, [ban('old', T0)]);
    now = T0 + 25 * HOUR_MS;
    await log.prune();
    assert.equal(log.holds('old'), false);
    assert.equal(log.knows(ban('older', T0 - HOUR_MS)), true);
  });

  test('pages catch-up answers by whole minutes', async () => {
    const log = newLog();
    await addAll(log, [purge('m0', T0, 'http://a/1'), purge('m0b', T0 + 1, 'http://a/2'), purge('m1', T0 + BUCKET_MS, 'http://a/3'), purge('m2', T0 + 2 * BUCKET_MS, 'http://a/4')]);
    const buckets = log.digest().map((d) => d.bucket);
    const first = log.messagesIn(buckets, 2);
    assert.deepEqual(first.messages.map((m) => m.id), ['m0', 'm0b']);
    assert.deepEqual(first.rest, buckets.slice(1));
  });

  test('its records survive a restart through the journal file, and rewriting drops what is covered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-cluster-log-'));
    try {
      const opened = await openFileLogStore(dir);
      const log = InvalidationLog.restore(opened.records, { store: opened.store, keyOf: (url) => url, now: () => T0 + HOUR_MS });
      await addAll(log, [purge('p1', T0), purge('p2', T0 + 1), ban('b1', T0)]);
      await log.markSynced(T0 + 100);
      await log.setCompleteSince(T0 - HOUR_MS);
      await opened.store.close();
      const reopened = await openFileLogStore(dir);
      const restored = InvalidationLog.restore(reopened.records, { store: reopened.store, keyOf: (url) => url, now: () => T0 + HOUR_MS });
      assert.equal(restored.holds('p2') && restored.holds('b1'), true);
      assert.equal(restored.holds('p1'), false);
      assert.equal(restored.knows(purge('p1', T0)), true, 'seen ids survive the restart');
      assert.equal(restored.syncedThroughMs, T0 + 100);
      assert.equal(restored.completeSinceMs, T0 - HOUR_MS);
      await restored.rewrite();
      await reopened.store.close();
      const lines = (await readFile(join(dir, CLUSTER_LOG_FILE_NAME), 'utf8')).trim().split('\n');
      assert.equal(lines.length, 4, 'complete_since, synced and the two invalidations held');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
