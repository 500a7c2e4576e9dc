// One hot tier shared by the threads of a node (src/store/shared-hot/): what one thread stores,
// every other reads; readers never see a record torn by a concurrent writer; and a thread that dies
// in the middle of a store leaves nothing that is served wrong once the main thread repaired the tier.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createHotStore, hotEntryBytes } from '../../src/store/hot-store.js';
import { BODY_DIGEST_HEADER, bodyDigest, makeEntry } from './entry-fixture.js';

const THREAD = new URL('./fixtures/hot-store-thread.js', import.meta.url);

function digestOk(headers: readonly string[], body: Buffer): boolean {
  const at = headers.indexOf(BODY_DIGEST_HEADER);
  return at >= 0 && headers[at + 1] === bodyDigest(body);
}

describe('one hot tier shared by threads', () => {
  test('two stores over one memory are one store: entries, counts and deletes are shared', () => {
    const first = createHotStore({ maxBytes: 1024 * 1024 });
    const second = createHotStore({ maxBytes: 1, memory: first.memory });
    const entry = makeEntry({ key: 'https://shared.example/a' });
    assert.equal(first.put(entry), 'stored');
    assert.equal(second.variants(entry.key)[0]?.body.equals(entry.body), true);
    assert.equal(second.entryCount, 1);
    assert.equal(second.byteCount, hotEntryBytes(entry));
    assert.equal(second.delete(entry.key), 1);
    assert.deepEqual(first.variants(entry.key), []);
  });

  test('three threads storing, reading and deleting at once: every read is whole', async () => {
    // Small, so that eviction and second passes run all the time.
    const store = createHotStore({ maxBytes: 256 * 1024 });
    const workers = [1, 2, 3].map((seed) => new Worker(THREAD, { workerData: { mode: 'churn', memory: store.memory, ms: 1500, seed } }));
    const results = (await Promise.all(workers.map((worker) => once(worker, 'message')))).map(([result]) => result as { reads: number; bad: number });
    await Promise.all(workers.map((worker) => worker.terminate()));
    const reads = results.reduce((sum, result) => sum + result.reads, 0);
    assert.ok(reads > 1000, `only ${reads} reads found an entry`);
    assert.deepEqual(results.map((result) => result.bad), [0, 0, 0]);
    // What is left adds up, and every entry in it is whole.
    let count = 0;
    let bytes = 0;
    for (const entry of store.entries()) {
      count += 1;
      bytes += hotEntryBytes(entry);
      assert.ok(digestOk(entry.headers, entry.body));
    }
    assert.equal(store.entryCount, count);
    assert.equal(store.byteCount, bytes);
    assert.ok(store.byteCount <= 256 * 1024);
  });

  test('a thread terminated in the middle of 1,000 stores: after repair, every entry served is whole', async (t) => {
    const store = createHotStore({ maxBytes: 512 * 1024 });
    let repaired = 0;
    for (let round = 0; round < 10; round += 1) {
      const progress = new Int32Array(new SharedArrayBuffer(4));
      const worker = new Worker(THREAD, { workerData: { mode: 'store', memory: store.memory, from: round * 1000, to: round * 1000 + 1000, progress } });
      const threadId = worker.threadId;
      // Terminated somewhere in its stores, at a point that differs from round to round.
      const stopAt = 50 + round * 90;
      while (Atomics.load(progress, 0) < stopAt) await new Promise((resolve) => setImmediate(resolve));
      await worker.terminate();
      if (store.repairAfter(threadId)) repaired += 1;
      assert.equal(store.lockHolder, undefined, 'the lock is free after the thread is gone');
      let count = 0;
      for (const entry of store.entries()) {
        count += 1;
        assert.ok(digestOk(entry.headers, entry.body), `entry ${entry.key} is whole`);
        assert.ok(store.variants(entry.key).every((variant) => digestOk(variant.headers, variant.body)));
      }
      assert.equal(store.entryCount, count);
    }
    // The tier still takes stores after the repairs.
    assert.equal(store.put(makeEntry({ key: 'https://crash.example/after' })), 'stored');
    t.diagnostic(`rounds that needed a repair: ${repaired} of 10`);
  });
});
