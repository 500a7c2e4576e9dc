// The primary applying its workers' changes to the warm tier it owns: a real warm store, a real
// invalidation engine (test/invalidation/fixture.ts), and records encoded as a worker sends them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CacheEntry } from '../../../src/cache/entry.js';
import { createLogger } from '../../../src/observe/logger.js';
import { encodeEntry } from '../../../src/store/warm/record-codec.js';
import { SharedWarmWrites } from '../../../src/node/workers/shared-warm-writes.js';
import { checkUp, type WarmWrite } from '../../../src/node/workers/thread-messages.js';
import { entry, LogLines, openRig, T0, type Rig } from '../../invalidation/fixture.js';

async function withWrites(run: (rig: Rig, writes: SharedWarmWrites, logs: LogLines) => Promise<void>): Promise<void> {
  const rig = await openRig({ startMs: T0 + 1_000 });
  const logs = new LogLines();
  const writes = new SharedWarmWrites({ warm: rig.warm, admissible: (stored) => rig.invalidator.admissible(stored), logger: createLogger({ destination: logs }) });
  try {
    await run(rig, writes, logs);
  } finally {
    await rig.cleanup();
  }
}

/** What a worker sends for a store: the warm record, which arrives as a Uint8Array view. */
function put(stored: CacheEntry): WarmWrite {
  const record = encodeEntry(stored);
  return { kind: 'warm', op: 'put', record: new Uint8Array(record.buffer, record.byteOffset, record.byteLength) };
}

function warmCopy(rig: Rig, key: string): CacheEntry | undefined {
  return rig.warm.peek(key)[0];
}

describe('the primary applying its workers\' warm-tier changes', () => {
  test('a store, a use and a delete reach the tier', async () => {
    await withWrites(async (rig, writes) => {
      const stored = entry({ key: 'http://example.com/kept', requestTimeMs: T0 + 500 });
      writes.apply(put(stored));
      assert.equal(warmCopy(rig, stored.key)?.requestTimeMs, T0 + 500);
      writes.apply({ kind: 'warm', op: 'use', variants: [[stored.key, '']] });
      writes.apply({ kind: 'warm', op: 'delete', key: stored.key });
      assert.equal(warmCopy(rig, stored.key), undefined);
      assert.equal(writes.refused, 0);
    });
  });

  test('a store whose fetch began before a purge the primary already applied is refused', async () => {
    await withWrites(async (rig, writes) => {
      await rig.invalidator.purge('http://example.com/purged');
      // Sent by a worker before it applied the purge, arriving after the primary did.
      writes.apply(put(entry({ key: 'http://example.com/purged', requestTimeMs: T0 + 500 })));
      assert.equal(warmCopy(rig, 'http://example.com/purged'), undefined);
      assert.equal(writes.refused, 1);
      // A fetch begun after the purge is the new content.
      rig.clock.ms += 10;
      writes.apply(put(entry({ key: 'http://example.com/purged', requestTimeMs: rig.clock.ms })));
      assert.equal(warmCopy(rig, 'http://example.com/purged')?.requestTimeMs, rig.clock.ms);
    });
  });

  test('a store a ban made after its fetch began matches is refused', async () => {
    await withWrites(async (rig, writes) => {
      await rig.invalidator.ban({ surrogate_key: 'product-1' });
      writes.apply(put(entry({ key: 'http://example.com/p1', tags: ['product-1'], requestTimeMs: T0 + 500 })));
      writes.apply(put(entry({ key: 'http://example.com/p2', tags: ['product-2'], requestTimeMs: T0 + 500 })));
      assert.equal(warmCopy(rig, 'http://example.com/p1'), undefined);
      assert.ok(warmCopy(rig, 'http://example.com/p2'));
      assert.equal(writes.refused, 1);
    });
  });

  test('a store a refresh made since covers is kept stale', async () => {
    await withWrites(async (rig, writes) => {
      await rig.invalidator.refresh('http://example.com/refreshed');
      writes.apply(put(entry({ key: 'http://example.com/refreshed', requestTimeMs: T0 + 500 })));
      assert.equal(warmCopy(rig, 'http://example.com/refreshed')?.forcedStale, true);
      rig.clock.ms += 10;
      writes.apply(put(entry({ key: 'http://example.com/refreshed', requestTimeMs: rig.clock.ms })));
      assert.equal(warmCopy(rig, 'http://example.com/refreshed')?.forcedStale, false, 'a fetch after the refresh is fresh');
    });
  });

  test('a record that does not decode is dropped and logged, and the tier is unchanged', async () => {
    await withWrites(async (rig, writes, logs) => {
      const record = encodeEntry(entry({ key: 'http://example.com/torn' }));
      writes.apply({ kind: 'warm', op: 'put', record: new Uint8Array(record.subarray(0, record.length - 4)) });
      assert.equal(rig.warm.entryCount, 0);
      assert.deepEqual(
        logs.lines.map((line) => line.msg),
        ['a data-plane worker sent a warm record that does not decode: dropped'],
      );
    });
  });

  test('a change that does not fit the message table never reaches the tier', () => {
    const checked = checkUp({ kind: 'warm', op: 'delete', key: 42 });
    assert.equal(checked.ok, false);
    assert.match(checked.ok ? '' : checked.issue, /key/);
  });
});

describe('refresh', () => {
  test('leaves what an earlier refresh made stale as it is, and counts only what it changed', async () => {
    const rig = await openRig({ startMs: T0 + 1_000 });
    try {
      rig.cache.store(entry({ key: 'http://example.com/twice', requestTimeMs: T0 }));
      assert.equal((await rig.invalidator.refresh('http://example.com/twice')).count, 1);
      assert.equal((await rig.invalidator.refresh('http://example.com/twice')).count, 0);
      assert.equal(warmCopy(rig, 'http://example.com/twice')?.forcedStale, true);
    } finally {
      await rig.cleanup();
    }
  });
});
