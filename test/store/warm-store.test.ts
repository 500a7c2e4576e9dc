import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { crc32 } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entrySizeBytes, type CacheEntry } from '../../src/cache/entry.js';
import { StoreError } from '../../src/store/errors.js';
import { recordId, WARM_SCHEMA_VERSION } from '../../src/store/warm/record-codec.js';
import { discardedSchemaMessage, SCHEMA_VERSION_KEY } from '../../src/store/warm/schema.js';
import { openWarmTables } from '../../src/store/warm/tables.js';
import { openWarmStore, type WarmStore, type WarmStoreOptions } from '../../src/store/warm/warm-store.js';
import {
  cacheStoreConformance,
  demotionTargetConformance,
  durableStoreConformance,
  storeInspectionConformance,
  sweptStoreConformance,
  type StoreFactory,
} from './conformance.js';
import { eventually } from '../support/eventually.js';
import { assertSameEntry, BODY_DIGEST_HEADER, bodyDigest, makeEntry } from './entry-fixture.js';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'svc-warm-'));
}

function open(path: string, options: Partial<WarmStoreOptions> = {}): Promise<WarmStore> {
  return openWarmStore({ path, maxBytes: 4 * 1024 * 1024, writeQueueLength: 10_000, ...options });
}

/** Rewrites one stored record directly through lmdb, as disk damage would. */
async function damage(path: string, table: 'records' | 'index', entry: CacheEntry, at: (length: number) => number) {
  const tables = openWarmTables(path);
  const id = recordId(entry.key, entry.variantKey);
  const stored = tables[table].getBinary(id);
  assert.ok(stored !== undefined, `no ${table} record to damage`);
  const damaged = Buffer.from(stored);
  const offset = at(damaged.length);
  damaged[offset] = (damaged[offset] as number) ^ 0x20;
  await tables[table].put(id, damaged);
  await tables.env.close();
}

async function onDisk(path: string, entry: CacheEntry): Promise<{ record: boolean; index: boolean }> {
  const tables = openWarmTables(path);
  const id = recordId(entry.key, entry.variantKey);
  const found = { record: tables.records.getBinary(id) !== undefined, index: tables.index.getBinary(id) !== undefined };
  await tables.env.close();
  return found;
}

// Settled once on disk: the suites read what a flush wrote, as well as what waits in the queue.
const openWarm: StoreFactory<WarmStore> = async ({ maxBytes }) => {
  const path = await tempDir();
  const store = await open(path, { maxBytes });
  return {
    store,
    settled: () => store.flush(),
    cleanup: async () => {
      await store.close();
      await rm(path, { recursive: true, force: true });
    },
  };
};
cacheStoreConformance('warm', openWarm, entrySizeBytes);
storeInspectionConformance('warm', openWarm, entrySizeBytes);
sweptStoreConformance('warm', openWarm);
demotionTargetConformance('warm', openWarm, entrySizeBytes);
durableStoreConformance('warm', async () => {
  const path = await tempDir();
  return { open: () => open(path), remove: () => rm(path, { recursive: true, force: true }) };
});

describe('warm store', () => {
  test('entries survive a restart and are served at once', async () => {
    const path = await tempDir();
    try {
      const entries = Array.from({ length: 50 }, (_, i) =>
        makeEntry({ key: `https://example.com/${i % 20}`, variantKey: `${i % 3}`, body: randomBytes(i * 100) }),
      );
      const first = await open(path);
      for (const entry of entries) first.put(entry);
      const live = new Map(entries.map((entry) => [`${entry.key} ${entry.variantKey}`, entry]));
      await first.close();

      const second = await open(path);
      assert.equal(second.openReport.entryCount, live.size);
      assert.equal(second.openReport.discardedSchema, undefined);
      assert.equal(second.entryCount, live.size);
      assert.equal(second.byteCount, [...live.values()].reduce((sum, entry) => sum + entrySizeBytes(entry), 0));
      for (const entry of live.values()) {
        assertSameEntry(second.variants(entry.key).find((found) => found.variantKey === entry.variantKey), entry);
      }
      assert.equal(second.selfHeals, 0);
      await second.close();
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('recency persists coarsely, so eviction after a restart spares what was read', async () => {
    const path = await tempDir();
    try {
      let nowMs = 1_000_000;
      const now = (): number => nowMs;
      const [a, b, c] = ['a', 'b', 'c'].map((name) => makeEntry({ key: `https://example.com/${name}` }));
      const size = entrySizeBytes(a as CacheEntry);
      const first = await open(path, { maxBytes: size * 3, now });
      // b is stored first, so it is the oldest once a has been read again (ties would fall to id order).
      for (const entry of [b, c, a]) {
        first.put(entry as CacheEntry);
        nowMs += 1_000;
      }
      await first.flush();
      // Reads within a minute of the stored access time are not written back; one later is.
      nowMs += 120_000;
      first.variants((a as CacheEntry).key);
      await first.close();

      const second = await open(path, { maxBytes: size * 3, now });
      second.put(makeEntry({ key: 'https://example.com/d' }));
      assert.deepEqual(second.variants((b as CacheEntry).key), [], 'b was the least recently used');
      assertSameEntry(second.variants((a as CacheEntry).key)[0], a as CacheEntry);
      await second.close();
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('a record that fails its checksum is deleted, never served, and counted', async () => {
    const path = await tempDir();
    try {
      const inBody = makeEntry({ key: 'https://example.com/body', body: randomBytes(300) });
      const inMeta = makeEntry({ key: 'https://example.com/meta' });
      const healthy = makeEntry({ key: 'https://example.com/healthy' });
      const first = await open(path);
      for (const entry of [inBody, inMeta, healthy]) first.put(entry);
      await first.close();
      await damage(path, 'records', inBody, (length) => length - 1);
      await damage(path, 'records', inMeta, () => 12);

      const second = await open(path);
      assert.equal(second.entryCount, 3, 'open reads no body, so damage is found on read');
      assert.deepEqual(second.variants(inBody.key), []);
      assert.deepEqual(second.variants(inMeta.key), []);
      assertSameEntry(second.variants(healthy.key)[0], healthy);
      assert.equal(second.selfHeals, 2);
      assert.equal(second.entryCount, 1);
      assert.equal(second.byteCount, entrySizeBytes(healthy));
      await second.close();
      assert.deepEqual(await onDisk(path, inBody), { record: false, index: false });
      assert.deepEqual(await onDisk(path, inMeta), { record: false, index: false });
      assert.deepEqual(await onDisk(path, healthy), { record: true, index: true });
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('a damaged index record is healed when read, and its size counted down from its record', async () => {
    const path = await tempDir();
    try {
      const damaged = makeEntry({ key: 'https://example.com/damaged' });
      const healthy = makeEntry({ key: 'https://example.com/healthy' });
      const first = await open(path);
      first.put(damaged);
      first.put(healthy);
      await first.close();
      await damage(path, 'index', damaged, (length) => length - 3);

      const second = await open(path);
      assert.equal(second.entryCount, 2, 'open reads no index record, so damage is found on read');
      assert.deepEqual(second.variants(damaged.key), []);
      assert.equal(second.selfHeals, 1);
      assert.equal(second.entryCount, 1);
      assert.equal(second.byteCount, entrySizeBytes(healthy));
      assertSameEntry(second.variants(healthy.key)[0], healthy);
      await second.flush();
      assert.equal(second.byteCount, entrySizeBytes(healthy));
      await second.close();
      assert.deepEqual(await onDisk(path, damaged), { record: false, index: false });
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('a record holding another key is not served', async () => {
    const path = await tempDir();
    try {
      const victim = makeEntry({ key: 'https://example.com/victim' });
      const other = makeEntry({ key: 'https://example.com/other' });
      const first = await open(path);
      first.put(victim);
      first.put(other);
      await first.close();
      // A valid record under the wrong id: what a hash collision or a misplaced write would leave.
      const tables = openWarmTables(path);
      const otherRecord = tables.records.getBinary(recordId(other.key, other.variantKey));
      assert.ok(otherRecord !== undefined);
      await tables.records.put(recordId(victim.key, victim.variantKey), Buffer.from(otherRecord));
      await tables.env.close();

      const second = await open(path);
      assert.deepEqual(second.variants(victim.key), []);
      assert.equal(second.selfHeals, 1);
      assertSameEntry(second.variants(other.key)[0], other);
      await second.close();
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('puts beyond the write queue are dropped and counted; the queue frees once written', async () => {
    const path = await tempDir();
    try {
      const store = await open(path, { writeQueueLength: 2 });
      const entries = [0, 1, 2, 3, 4].map((i) => makeEntry({ key: `https://example.com/${i}` }));
      assert.deepEqual(
        entries.map((entry) => store.put(entry)),
        ['stored', 'stored', 'dropped', 'dropped', 'dropped'],
      );
      assert.equal(store.droppedWrites, 3);
      assert.equal(store.entryCount, 2);
      assert.deepEqual(store.variants((entries[2] as CacheEntry).key), []);
      // Replacing a waiting put takes no extra room.
      const replacement = makeEntry({ key: (entries[1] as CacheEntry).key, body: randomBytes(10) });
      assert.equal(store.put(replacement), 'stored');
      await store.flush();
      assert.equal(store.put(entries[2] as CacheEntry), 'stored');
      assert.equal(store.droppedWrites, 3);
      await store.close();

      const reopened = await open(path);
      assert.equal(reopened.entryCount, 3);
      assertSameEntry(reopened.variants(replacement.key)[0], replacement);
      assertSameEntry(reopened.variants((entries[2] as CacheEntry).key)[0], entries[2] as CacheEntry);
      await reopened.close();
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('lastSyncMs: every write made before it is on disk, and those of other threads once they have arrived', async () => {
    const path = await tempDir();
    try {
      let nowMs = 5_000;
      const store = await open(path, { now: () => nowMs });
      assert.equal(store.lastSyncMs, 5_000, 'open: nothing was written yet');
      let arrived = false;
      const waiting: ((arrived: boolean) => void)[] = [];
      store.setRemoteWriters(() => (arrived ? Promise.resolve(true) : new Promise((resolve) => waiting.push(resolve))));
      nowMs = 9_000;
      store.put(makeEntry());
      nowMs = 9_001;
      await store.flush();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(store.lastSyncMs, 5_000, 'on disk, but another thread may have stored before 9,001 and its write be on its way');
      arrived = true;
      for (const resolve of waiting) resolve(true);
      await eventually('lastSyncMs past the write', () => store.lastSyncMs, (ms) => ms === 9_000);

      store.put(makeEntry());
      await store.flush();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(store.lastSyncMs, 9_000, 'a write in the millisecond the clock was read (9,001) may have come after the read');
      // Nothing more is written: a step comes all the same.
      nowMs = 9_002;
      await eventually('lastSyncMs past the last write', () => store.lastSyncMs, (ms) => ms === 9_001);
      await store.close();
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  for (const foundVersion of [WARM_SCHEMA_VERSION + 1, WARM_SCHEMA_VERSION - 1]) {
    test(`a directory of schema version ${foundVersion} is wiped, not served`, async () => {
      const path = await tempDir();
      try {
        const entry = makeEntry();
        const first = await open(path);
        first.put(entry);
        await first.close();
        const tables = openWarmTables(path);
        await tables.meta.put(SCHEMA_VERSION_KEY, foundVersion);
        await tables.env.close();

        const second = await open(path);
        assert.deepEqual(second.openReport.discardedSchema, { foundVersion, entryCount: 1 });
        assert.equal(second.entryCount, 0);
        assert.deepEqual(second.variants(entry.key), []);
        second.put(entry);
        await second.close();

        const third = await open(path);
        assert.equal(third.openReport.discardedSchema, undefined);
        assertSameEntry(third.variants(entry.key)[0], entry);
        await third.close();
      } finally {
        await rm(path, { recursive: true, force: true });
      }
    });
  }

  // Versions 1 (the first layout) and 2 (keys with the scheme, issue 14) wrote the same index record,
  // without fetch time or tags; this build's index records carry both (version 3).
  for (const oldVersion of [1, 2]) {
    test(`a directory written by schema version ${oldVersion} (index records without fetch time or tags) is wiped, never misread`, async () => {
      const path = await tempDir();
      try {
        // The old layout, byte for byte: frames of CRC-32 and the old version; an index record's
        // payload is [key, variantKey, sizeBytes, lastAccessMs]; the entry record's metadata is the
        // same 19 fields as today.
        const oldFrame = (payload: Buffer): Buffer => {
          const framed = Buffer.alloc(6 + payload.length);
          framed.writeUInt16BE(oldVersion, 4);
          payload.copy(framed, 6);
          framed.writeUInt32BE(crc32(framed.subarray(4)), 0);
          return framed;
        };
        const entry = makeEntry({ key: `https://example.com/v${oldVersion}` });
        const current = await open(path);
        current.put(entry);
        await current.close();
        const tables = openWarmTables(path);
        const id = recordId(entry.key, entry.variantKey);
        const stored = tables.records.getBinary(id) as Buffer;
        await tables.records.put(id, oldFrame(stored.subarray(6)));
        await tables.index.put(id, oldFrame(Buffer.from(JSON.stringify([entry.key, entry.variantKey, 100, 1_700_000_000_000]))));
        await tables.meta.put(SCHEMA_VERSION_KEY, oldVersion);
        await tables.env.close();

        const reopened = await open(path);
        try {
          const discarded = reopened.openReport.discardedSchema;
          assert.deepEqual(discarded, { foundVersion: oldVersion, entryCount: 1 });
          assert.equal(
            discardedSchemaMessage(path, discarded),
            `the warm tier at ${path} was written with schema version ${oldVersion}, and this build reads version ${WARM_SCHEMA_VERSION}: ` +
              'its 1 entries were discarded, not read, and it starts empty (the origin refills it)',
          );
          assert.equal(reopened.entryCount, 0);
          assert.equal(reopened.selfHeals, 0, 'nothing was read to find out');
          assert.deepEqual(reopened.variants(entry.key), []);
          assert.deepEqual([...reopened.summaries()], []);
        } finally {
          await reopened.close();
        }
        assert.deepEqual(await onDisk(path, entry), { record: false, index: false });
      } finally {
        await rm(path, { recursive: true, force: true });
      }
    });
  }

  test('summaries() come from the index after a restart: key, variant, fetch time and tags, no record read', async () => {
    const path = await tempDir();
    try {
      const tagged = { ...makeEntry({ key: 'https://example.com/tagged', variantKey: 'gzip' }), requestTimeMs: 1_700_000_123_456, tags: ['a', 'b'] };
      const untagged = { ...makeEntry({ key: 'https://example.com/untagged' }), tags: [] };
      const first = await open(path);
      first.put(tagged);
      first.put(untagged);
      await first.close();
      // Both records damaged: reading either would fail its checksum and count a self-heal.
      await damage(path, 'records', tagged, (length) => length - 1);
      await damage(path, 'records', untagged, (length) => length - 1);

      const second = await open(path);
      try {
        const summaries = [...second.summaries()].map(({ key, variantKey, requestTimeMs, tags }) => ({ key, variantKey, requestTimeMs, tags }));
        assert.deepEqual(
          summaries.sort((a, b) => a.key.localeCompare(b.key)),
          [
            { key: tagged.key, variantKey: 'gzip', requestTimeMs: 1_700_000_123_456, tags: ['a', 'b'] },
            { key: untagged.key, variantKey: '', requestTimeMs: untagged.requestTimeMs, tags: [] },
          ],
        );
        assert.equal(second.selfHeals, 0, 'no record was read');
        assert.equal(second.entryCount, 2);
      } finally {
        await second.close();
      }
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('records with no schema version at all are wiped', async () => {
    const path = await tempDir();
    try {
      const first = await open(path);
      first.put(makeEntry());
      await first.close();
      const tables = openWarmTables(path);
      await tables.meta.remove(SCHEMA_VERSION_KEY);
      await tables.env.close();

      const second = await open(path);
      assert.deepEqual(second.openReport.discardedSchema, { foundVersion: null, entryCount: 1 });
      assert.equal(second.entryCount, 0);
      await second.close();
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('a directory whose data file is not lmdb is refused, not opened', async () => {
    const path = await tempDir();
    try {
      await writeFile(join(path, 'data.mdb'), Buffer.alloc(8192, 7));
      await assert.rejects(open(path), (error: unknown) => error instanceof StoreError && error.code === 'open_failed');
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });

  test('kill -9 during writes never leaves a record that is served wrong', { timeout: 60_000 }, async () => {
    const path = await tempDir();
    const writer = fileURLToPath(new URL('./fixtures/warm-writer.js', import.meta.url));
    const delaysMs: number[] = [];
    try {
      for (let round = 0; round < 5; round += 1) {
        const delayMs = 100 + Math.floor(Math.random() * 900);
        delaysMs.push(delayMs);
        const child = spawn(process.execPath, [writer, path], { stdio: ['ignore', 'pipe', 'inherit'] });
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => {
            if (chunk.toString().includes('ready')) resolve();
          });
          child.once('exit', () => reject(new Error(`writer exited before it was ready (round ${round})`)));
        });
        // The behaviour under test: a kill at a random point of the writes.
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        child.kill('SIGKILL');
        assert.equal(await exited, 'SIGKILL', 'the writer was still writing when killed');

        const store = await open(path, { maxBytes: 2 * 1024 * 1024 });
        let served = 0;
        for (const entry of store.entries()) {
          const digest = entry.headers[entry.headers.indexOf(BODY_DIGEST_HEADER) + 1];
          assert.equal(bodyDigest(entry.body), digest, `body differs from its digest (delays ${delaysMs.join(',')})`);
          served += 1;
        }
        assert.equal(served, store.entryCount, 'every indexed entry is served');
        assert.ok(served > 0, `the writer committed something (delays ${delaysMs.join(',')})`);
        assert.equal(store.selfHeals, 0, 'lmdb commits whole transactions: no torn record');
        await store.close();
      }
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });
});
