// The warm tier read by a process that does not own it (a data-plane worker): here the owner and
// the reader are two environments on one real lmdb directory, as two processes would open it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '../../src/store/errors.js';
import { keyPrefix, recordId, WARM_SCHEMA_VERSION } from '../../src/store/warm/record-codec.js';
import { SCHEMA_VERSION_KEY } from '../../src/store/warm/schema.js';
import { openWarmTables } from '../../src/store/warm/tables.js';
import { WarmReader } from '../../src/store/warm/warm-reader.js';
import { openWarmStore, type WarmStore } from '../../src/store/warm/warm-store.js';
import { assertSameEntry, makeEntry } from './entry-fixture.js';

async function withOwnerAndReader(run: (owner: WarmStore, reader: WarmReader, path: string) => Promise<void>): Promise<void> {
  const path = await mkdtemp(join(tmpdir(), 'svc-warm-reader-'));
  const owner = await openWarmStore({ path, maxBytes: 4 * 1024 * 1024, writeQueueLength: 1_000 });
  const reader = WarmReader.open(path);
  try {
    await run(owner, reader, path);
  } finally {
    await reader.close();
    await owner.close();
    await rm(path, { recursive: true, force: true });
  }
}

describe('warm reader', () => {
  test('finds every variant of a key by its prefix, newest fetch first, and none of another key', async () => {
    await withOwnerAndReader(async (owner, reader) => {
      const key = 'https://example.com/page';
      const older = { ...makeEntry({ key, variantKey: 'gzip' }), requestTimeMs: 1_000 };
      const newer = { ...makeEntry({ key, variantKey: 'br' }), requestTimeMs: 2_000 };
      owner.put(older);
      owner.put(newer);
      owner.put(makeEntry({ key: `${key}2` }));
      owner.put(makeEntry({ key: 'https://example.com/pag' }));
      await owner.flush();
      reader.renewSnapshot();
      const read = reader.variantsOf(key);
      assert.equal(read.damaged, false);
      assert.deepEqual(read.entries.map((entry) => entry.variantKey), ['br', 'gzip']);
      assertSameEntry(read.entries[0]!, newer);
      assertSameEntry(read.entries[1]!, older);
      assert.equal(reader.has(key, 'br'), true);
      assert.equal(reader.has(key, 'deflate'), false);
      assert.deepEqual(reader.variantsOf('https://example.com/none').entries, []);
    });
  });

  test('sees what the owner committed once its snapshot is renewed, deletes included', async () => {
    await withOwnerAndReader(async (owner, reader) => {
      const entry = makeEntry({ key: 'https://example.com/gone' });
      owner.put(entry);
      await owner.flush();
      reader.renewSnapshot();
      assert.equal(reader.variantsOf(entry.key).entries.length, 1);
      owner.delete(entry.key);
      await owner.flush();
      reader.renewSnapshot();
      assert.deepEqual(reader.variantsOf(entry.key).entries, []);
      assert.equal(reader.has(entry.key, ''), false);
    });
  });

  test('a record that fails its check is reported and never served', async () => {
    await withOwnerAndReader(async (owner, reader, path) => {
      const entry = makeEntry({ key: 'https://example.com/damaged', body: Buffer.from('a body long enough to damage') });
      owner.put(entry);
      await owner.flush();
      // Disk damage in the body: the checksum fails.
      const tables = openWarmTables(path);
      const id = recordId(entry.key, entry.variantKey);
      const damaged = Buffer.from(tables.records.getBinary(id)!);
      damaged[damaged.length - 3] = damaged[damaged.length - 3]! ^ 0x20;
      await tables.records.put(id, damaged);
      await tables.env.close();
      reader.renewSnapshot();
      assert.deepEqual(reader.variantsOf(entry.key), { entries: [], damaged: true });
      // The owner, asked to read the key, deletes the record.
      assert.deepEqual(owner.peek(entry.key), []);
      await owner.flush();
      reader.renewSnapshot();
      assert.deepEqual(reader.variantsOf(entry.key), { entries: [], damaged: false });
    });
  });

  test('a record stored under another key\'s id is damage, not an answer', async () => {
    await withOwnerAndReader(async (owner, reader, path) => {
      const entry = makeEntry({ key: 'https://example.com/moved' });
      const other = makeEntry({ key: 'https://example.com/moved', variantKey: 'br' });
      owner.put(entry);
      owner.put(other);
      await owner.flush();
      // The br variant's bytes under the plain variant's id: a swapped record.
      const tables = openWarmTables(path);
      await tables.records.put(recordId(entry.key, ''), tables.records.getBinary(recordId(other.key, 'br'))!);
      await tables.env.close();
      reader.renewSnapshot();
      const read = reader.variantsOf(entry.key);
      assert.equal(read.damaged, true);
      assert.deepEqual(read.entries.map((each) => each.variantKey), ['br']);
    });
  });

  test('the ids of a key\'s variants begin with the same prefix and differ after it', () => {
    const id = recordId('https://example.com/a', 'gzip');
    assert.deepEqual(id.subarray(0, 8), keyPrefix('https://example.com/a'));
    assert.notDeepEqual(recordId('https://example.com/a', 'br').subarray(8), id.subarray(8));
  });

  test('refuses a directory its owner has not opened under this build\'s schema', async () => {
    const path = await mkdtemp(join(tmpdir(), 'svc-warm-reader-'));
    try {
      const tables = openWarmTables(path);
      await tables.meta.put(SCHEMA_VERSION_KEY, WARM_SCHEMA_VERSION - 1);
      await tables.env.close();
      const message = `names schema version ${WARM_SCHEMA_VERSION - 1}, not ${WARM_SCHEMA_VERSION}: its owner has not opened it`;
      assert.throws(() => WarmReader.open(path), (error: unknown) => error instanceof StoreError && error.message.includes(message));
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  });
});
