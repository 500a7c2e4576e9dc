import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BAN_RETENTION_MS } from '../../src/invalidation/create-invalidator.js';
import { CorruptJournalError } from '../../src/invalidation/errors.js';
import { JOURNAL_FILE_NAME } from '../../src/invalidation/invalidation-journal.js';
import { recordId } from '../../src/store/warm/record-codec.js';
import { openWarmTables } from '../../src/store/warm/tables.js';
import { entry, holds, HOUR_MS, openRig, serve, T0 } from './fixture.js';

describe('24-hour retention', () => {
  test('a ban is pruned after 24 h, and what it still hid is deleted rather than served again', async () => {
    const rig = await openRig();
    try {
      rig.warm.put(entry({ key: 'http://a.com/warm-only' }));
      rig.warm.put(entry({ key: 'http://b.com/unrelated' }));
      rig.clock.ms = T0 + 1000;
      await rig.invalidator.ban({ host_regex: '^a\\.com$' });
      await rig.invalidator.ban({ surrogate_key: 'tag' });
      // Fetches in flight when the bans came, stored after them and never looked up since.
      rig.cache.store(entry({ key: 'http://a.com/raced', requestTimeMs: T0 + 500 }));
      rig.cache.store(entry({ key: 'http://c.com/tagged', tags: ['tag'], requestTimeMs: T0 + 500 }));
      const kept = entry({ key: 'http://a.com/after', requestTimeMs: T0 + 2000 });
      rig.cache.store(kept);

      rig.clock.ms = T0 + 1000 + BAN_RETENTION_MS - 1;
      assert.deepEqual(await rig.invalidator.pruneNow(), { bansPruned: 0, purgeRecordsPruned: 0, entriesDeleted: 0 });
      assert.equal(rig.invalidator.activeBans().length, 2);

      rig.clock.ms = T0 + 1000 + BAN_RETENTION_MS;
      const report = await rig.invalidator.pruneNow();
      assert.deepEqual(report, { bansPruned: 2, purgeRecordsPruned: 0, entriesDeleted: 3 });
      assert.deepEqual(rig.invalidator.activeBans(), []);
      for (const key of ['http://a.com/warm-only', 'http://a.com/raced', 'http://c.com/tagged']) {
        assert.equal(holds(rig.hot, key) || holds(rig.warm, key), false, key);
        assert.equal(serve(rig, key), undefined, key);
      }
      assert.ok(serve(rig, 'http://b.com/unrelated'));
      assert.ok(serve(rig, 'http://a.com/after'));
      // With the ban gone, the lazy check no longer hides what it matched.
      assert.equal(rig.invalidator.isInvalidated(entry({ key: 'http://a.com/new', requestTimeMs: T0 })), false);
    } finally {
      await rig.cleanup();
    }
  });

  test('the prune sweep reads no body: warm entries are judged by the index alone', async () => {
    const rig = await openRig();
    try {
      const hidden = entry({ key: 'http://a.com/warm-only', tags: ['t'] });
      const kept = entry({ key: 'http://b.com/unrelated', tags: ['t'] });
      rig.warm.put(hidden);
      rig.warm.put(kept);
      rig.clock.ms = T0 + 1000;
      await rig.invalidator.ban({ host_regex: '^a\\.com$', surrogate_key: 't' });
      await rig.close();
      // Damage both records on disk: reading either would fail its checksum and count a self-heal.
      const tables = openWarmTables(join(rig.dir, 'warm'));
      for (const damaged of [hidden, kept]) {
        const id = recordId(damaged.key, damaged.variantKey);
        const record = Buffer.from(tables.records.getBinary(id) as Buffer);
        record[record.length - 1] = (record[record.length - 1] as number) ^ 0xff;
        await tables.records.put(id, record);
      }
      await tables.env.close();

      const restarted = await openRig({ dir: rig.dir, startMs: T0 + 1000 + BAN_RETENTION_MS });
      try {
        assert.deepEqual(await restarted.invalidator.pruneNow(), { bansPruned: 1, purgeRecordsPruned: 0, entriesDeleted: 1 });
        assert.equal(restarted.warm.selfHeals, 0, 'no record was read');
        assert.equal(restarted.warm.has(hidden.key, ''), false);
        assert.equal(restarted.warm.has(kept.key, ''), true);
      } finally {
        await restarted.close();
      }
    } finally {
      await rig.cleanup();
    }
  });

  test('pruning one surrogate-key ban keeps a newer ban on the same tag in force', async () => {
    const rig = await openRig();
    try {
      rig.clock.ms = T0;
      await rig.invalidator.ban({ surrogate_key: 't' });
      rig.clock.ms = T0 + 12 * HOUR_MS;
      await rig.invalidator.ban({ surrogate_key: 't' });
      const between = entry({ key: 'http://x.com/1', tags: ['t'], requestTimeMs: T0 + HOUR_MS });
      rig.clock.ms = T0 + BAN_RETENTION_MS;
      assert.equal((await rig.invalidator.pruneNow()).bansPruned, 1);
      assert.equal(rig.invalidator.isInvalidated(between), true);
      rig.clock.ms = T0 + 12 * HOUR_MS + BAN_RETENTION_MS;
      assert.equal((await rig.invalidator.pruneNow()).bansPruned, 1);
      assert.equal(rig.invalidator.isInvalidated(between), false);
    } finally {
      await rig.cleanup();
    }
  });

  test('a ban added once the prune interval has passed prunes expired bans too', async () => {
    const rig = await openRig({ engine: { pruneIntervalMs: HOUR_MS } });
    try {
      await rig.invalidator.ban({ host_regex: 'old' });
      rig.clock.ms = T0 + BAN_RETENTION_MS + HOUR_MS;
      await rig.invalidator.ban({ host_regex: 'new' });
      // The prune runs in the background; waiting for the one in flight.
      await rig.invalidator.pruneNow();
      assert.deepEqual(
        rig.invalidator.activeBans().map((b) => b.host_regex),
        ['new'],
      );
    } finally {
      await rig.cleanup();
    }
  });
});

describe('persistence', () => {
  test('bans and purge records survive a restart and keep hiding warm entries', async () => {
    const rig = await openRig();
    try {
      rig.clock.ms = T0 + 1000;
      await rig.invalidator.ban({ path_regex: '^/r/', host_regex: 'a' });
      await rig.invalidator.ban({ surrogate_key: 'p1' });
      await rig.invalidator.purge('http://a.com/purged');
      rig.cache.store(entry({ key: 'http://a.com/r/1', requestTimeMs: T0 }));
      rig.cache.store(entry({ key: 'http://b.com/t', tags: ['p1'], requestTimeMs: T0 }));
      rig.cache.store(entry({ key: 'http://a.com/purged', requestTimeMs: T0 + 900 }));
      rig.cache.store(entry({ key: 'http://a.com/r/2', requestTimeMs: T0 + 2000 }));
      const before = rig.invalidator.activeBans();
      await rig.close();

      const restarted = await openRig({ dir: rig.dir, startMs: T0 + 5000 });
      try {
        assert.deepEqual(restarted.invalidator.activeBans(), before);
        assert.equal(restarted.hot.entryCount, 0, 'the hot tier starts empty');
        for (const key of ['http://a.com/r/1', 'http://b.com/t', 'http://a.com/purged']) {
          assert.ok(holds(restarted.warm, key), `${key} is on disk`);
          assert.equal(serve(restarted, key), undefined, key);
        }
        assert.ok(serve(restarted, 'http://a.com/r/2'));
        // A new ban after the restart is ordered after the replayed ones.
        await restarted.invalidator.ban({ host_regex: 'z' });
        assert.equal(restarted.invalidator.activeBans().at(-1)?.host_regex, 'z');
      } finally {
        await restarted.close();
      }
    } finally {
      await rig.cleanup();
    }
  });

  test('a torn last journal line (a crash mid-write) is ignored and does not corrupt later appends', async () => {
    const rig = await openRig();
    try {
      await rig.invalidator.ban({ host_regex: 'first' });
      await rig.close();
      const journal = join(rig.dir, 'invalidation', JOURNAL_FILE_NAME);
      await appendFile(journal, '{"type":"ban","id":"torn","created_ms":17000');

      const second = await openRig({ dir: rig.dir });
      assert.deepEqual(
        second.invalidator.activeBans().map((b) => b.host_regex),
        ['first'],
      );
      await second.invalidator.ban({ host_regex: 'second' });
      await second.close();

      const third = await openRig({ dir: rig.dir });
      try {
        assert.deepEqual(
          third.invalidator.activeBans().map((b) => b.host_regex),
          ['first', 'second'],
        );
        assert.equal((await readFile(journal, 'utf8')).includes('torn'), false);
      } finally {
        await third.close();
      }
    } finally {
      await rig.cleanup();
    }
  });

  test('a damaged line before the last one stops the start with the line number', async () => {
    const rig = await openRig();
    try {
      await rig.invalidator.ban({ host_regex: 'kept' });
      await rig.close();
      const journal = join(rig.dir, 'invalidation', JOURNAL_FILE_NAME);
      const text = await readFile(journal, 'utf8');
      await writeFile(journal, `${text}{not json}\n${text}`);
      await assert.rejects(openRig({ dir: rig.dir }), (error: unknown) => {
        assert.ok(error instanceof CorruptJournalError);
        assert.ok(error.message.includes('line 2'), error.message);
        return true;
      });
    } finally {
      await rig.cleanup();
    }
  });

  test('without a data directory bans live in memory only', async () => {
    const rig = await openRig({ noJournal: true });
    try {
      await rig.invalidator.ban({ host_regex: 'x' });
      assert.equal(rig.invalidator.activeBans().length, 1);
      await assert.rejects(stat(join(rig.dir, 'invalidation')), { code: 'ENOENT' });
    } finally {
      await rig.cleanup();
    }
  });

  test('pruning compacts the journal', async () => {
    const rig = await openRig();
    try {
      await rig.invalidator.ban({ host_regex: 'old' });
      rig.clock.ms = T0 + BAN_RETENTION_MS;
      await rig.invalidator.ban({ host_regex: 'new' });
      await rig.invalidator.pruneNow();
      const journal = join(rig.dir, 'invalidation', JOURNAL_FILE_NAME);
      const lines = (await readFile(journal, 'utf8')).trim().split('\n');
      assert.deepEqual(
        lines.map((line) => (JSON.parse(line) as { host_regex?: string }).host_regex),
        ['new'],
      );
    } finally {
      await rig.cleanup();
    }
  });
});
