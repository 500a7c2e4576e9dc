// The warm tier's write queue writes in bounded batches (a batch is one lmdb transaction, run on the
// event loop) and settled() still resolves only once everything enqueued before it is written. The
// commit here is the queue's own injection point: it records the batches instead of writing them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BATCH_OPS, MAX_BATCH_PUT_BYTES, WriteQueue, type QueuedOp } from '../../src/store/warm/write-queue.js';

interface Op extends QueuedOp {
  readonly kind: 'put' | 'delete';
  readonly sizeBytes?: number;
  readonly tag: string;
}

function recordingQueue(): { queue: WriteQueue<Op>; batches: Map<string, Op>[]; written: () => number } {
  const batches: Map<string, Op>[] = [];
  let written = 0;
  const queue = new WriteQueue<Op>({
    maxPuts: 1_000_000,
    commit: async (batch) => {
      batches.push(new Map(batch));
      await new Promise((resolve) => setImmediate(resolve));
      written += 1;
    },
    onFailed: () => assert.fail('no batch fails here'),
  });
  return { queue, batches, written: () => written };
}

describe('warm write queue', () => {
  test(`deletes go to disk ${MAX_BATCH_OPS} at a time, oldest first, and settled() waits for the last`, async () => {
    const { queue, batches } = recordingQueue();
    const count = 3 * MAX_BATCH_OPS + 10;
    for (let i = 0; i < count; i += 1) queue.enqueue(`id-${i}`, { kind: 'delete', tag: `${i}` });
    await queue.settled();
    assert.deepEqual(
      batches.map((batch) => batch.size),
      [MAX_BATCH_OPS, MAX_BATCH_OPS, MAX_BATCH_OPS, 10],
    );
    assert.deepEqual(
      batches.flatMap((batch) => [...batch.keys()]),
      Array.from({ length: count }, (_, i) => `id-${i}`),
    );
    assert.equal(queue.length, 0);
  });

  test('puts are bounded by bytes too, and a put larger than the bound goes alone', async () => {
    const { queue, batches } = recordingQueue();
    const quarter = MAX_BATCH_PUT_BYTES / 4;
    for (let i = 0; i < 6; i += 1) queue.enqueue(`small-${i}`, { kind: 'put', sizeBytes: quarter, tag: '' });
    queue.enqueue('huge', { kind: 'put', sizeBytes: 3 * MAX_BATCH_PUT_BYTES, tag: '' });
    queue.enqueue('after', { kind: 'delete', tag: '' });
    await queue.settled();
    assert.deepEqual(
      batches.map((batch) => [...batch.keys()]),
      [['small-0', 'small-1', 'small-2', 'small-3'], ['small-4', 'small-5'], ['huge', 'after']],
    );
  });

  test('settled() covers a record whose operation was replaced: it waits for the replacement', async () => {
    const { queue, batches, written } = recordingQueue();
    for (let i = 0; i < 2 * MAX_BATCH_OPS; i += 1) queue.enqueue(`id-${i}`, { kind: 'delete', tag: 'first' });
    // The last record of the second batch is replaced after settled() was asked: it keeps its
    // place, and settled() resolves only once the batch holding its latest operation is written.
    const settled = queue.settled().then(written);
    queue.enqueue(`id-${2 * MAX_BATCH_OPS - 1}`, { kind: 'put', sizeBytes: 1, tag: 'replacement' });
    assert.equal(await settled, 2);
    assert.equal(batches[1]?.get(`id-${2 * MAX_BATCH_OPS - 1}`)?.tag, 'replacement');
  });

  test('an operation enqueued while its record is being written is written after, and settled() waits for it', async () => {
    const { queue, batches, written } = recordingQueue();
    for (let i = 0; i < MAX_BATCH_OPS + 1; i += 1) queue.enqueue(`id-${i}`, { kind: 'delete', tag: 'first' });
    // Let the first batch start: its commit is now in flight.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(batches.length, 1);
    queue.enqueue('id-0', { kind: 'put', sizeBytes: 1, tag: 'again' });
    assert.equal(queue.pending('id-0')?.tag, 'again');
    const settledAfter = await queue.settled().then(written);
    assert.equal(settledAfter, batches.length, 'settled once the last batch was written');
    const last = batches.at(-1);
    assert.equal(last?.get('id-0')?.tag, 'again');
    assert.ok(last?.has(`id-${MAX_BATCH_OPS}`), 'the rest of the first wave is written with it');
  });
});
