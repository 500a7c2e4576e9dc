import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TransmitLimitedQueue } from '../../cluster/gossip/transmit-limited-queue.js';
import { PiggybackQueues } from '../../cluster/gossip/piggyback-queues.js';

/** A message of `size` bytes whose first byte identifies it. */
function message(id: number, size = 10): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes[0] = id;
  return bytes;
}

function ids(out: Uint8Array[]): number[] {
  return out.map((bytes) => bytes[0] as number);
}

function take(queue: { fill(maxBytes: number, out: Uint8Array[]): number }, maxBytes: number): number[] {
  const out: Uint8Array[] = [];
  queue.fill(maxBytes, out);
  return ids(out);
}

describe('TransmitLimitedQueue', () => {
  test('sends each message transmitLimit times, then forgets it', () => {
    const queue = new TransmitLimitedQueue({ maxLength: 10, transmitLimit: () => 3 });
    let done = 0;
    queue.enqueue(message(1), undefined, () => done++);
    assert.deepEqual(take(queue, 100), [1]);
    assert.deepEqual(take(queue, 100), [1]);
    assert.equal(done, 0);
    assert.deepEqual(take(queue, 100), [1]);
    assert.equal(done, 1);
    assert.equal(queue.length, 0);
    assert.deepEqual(take(queue, 100), []);
  });

  test('hands out the least-transmitted first, newest first among new ones', () => {
    const queue = new TransmitLimitedQueue({ maxLength: 10, transmitLimit: () => 5 });
    queue.enqueue(message(1));
    assert.deepEqual(take(queue, 10), [1]);
    queue.enqueue(message(2));
    queue.enqueue(message(3));
    assert.deepEqual(take(queue, 10), [3]);
    assert.deepEqual(take(queue, 10), [2]);
    assert.deepEqual(take(queue, 30), [1, 3, 2]);
  });

  test('a newer message under the same key supersedes the older one', () => {
    const queue = new TransmitLimitedQueue({ maxLength: 10, transmitLimit: () => 5 });
    let supersededDone = false;
    queue.enqueue(message(1), 'node-a', () => {
      supersededDone = true;
    });
    queue.enqueue(message(2), 'node-b');
    queue.enqueue(message(3), 'node-a');
    assert.equal(supersededDone, true);
    assert.equal(queue.length, 2);
    assert.deepEqual(take(queue, 100).sort(), [2, 3]);
    assert.equal(queue.drops, 0);
  });

  test('never exceeds the byte budget and skips to smaller messages that fit', () => {
    const queue = new TransmitLimitedQueue({ maxLength: 10, transmitLimit: () => 5 });
    queue.enqueue(message(1, 30));
    queue.enqueue(message(2, 50));
    queue.enqueue(message(3, 10));
    const out: Uint8Array[] = [];
    const used = queue.fill(45, out);
    assert.deepEqual(ids(out), [3, 1]);
    assert.equal(used, 40);
  });

  test('past maxLength drops the most-transmitted message and counts it', () => {
    const queue = new TransmitLimitedQueue({ maxLength: 2, transmitLimit: () => 9 });
    queue.enqueue(message(1));
    take(queue, 10);
    queue.enqueue(message(2));
    queue.enqueue(message(3));
    assert.equal(queue.length, 2);
    assert.equal(queue.drops, 1);
    assert.deepEqual(take(queue, 100).sort(), [2, 3]);
  });

  test('follows a transmit limit that shrinks', () => {
    let limit = 10;
    const queue = new TransmitLimitedQueue({ maxLength: 10, transmitLimit: () => limit });
    queue.enqueue(message(1));
    take(queue, 10);
    limit = 2;
    take(queue, 10);
    assert.equal(queue.length, 0);
  });

  test('clear empties the queue and finishes every message', () => {
    const queue = new TransmitLimitedQueue({ maxLength: 10, transmitLimit: () => 3 });
    let done = 0;
    queue.enqueue(message(1), 'a', () => done++);
    queue.enqueue(message(2), undefined, () => done++);
    queue.clear();
    assert.equal(queue.length, 0);
    assert.equal(done, 2);
  });
});

describe('PiggybackQueues', () => {
  test('membership churn cannot starve user broadcasts', () => {
    const queues = new PiggybackQueues({
      membershipMaxLength: 1000,
      userMaxLength: 1000,
      userShare: 0.5,
      transmitLimit: () => 100,
    });
    for (let i = 0; i < 500; i++) queues.membership.enqueue(message(1), `member-${i}`);
    queues.user.enqueue(message(200));
    const out = take(queues, 100);
    assert.ok(out.includes(200));
    assert.equal(out.length, 10);
  });

  test('either side uses the whole packet when the other has nothing', () => {
    const queues = new PiggybackQueues({ membershipMaxLength: 100, userMaxLength: 100, userShare: 0.5, transmitLimit: () => 9 });
    for (let i = 0; i < 10; i++) queues.user.enqueue(message(i));
    assert.equal(take(queues, 100).length, 10);
    queues.clear();
    for (let i = 0; i < 10; i++) queues.membership.enqueue(message(i), `m${i}`);
    assert.equal(take(queues, 100).length, 10);
  });

  test('a packet never carries the same user broadcast twice, so each transmit reaches a new packet', () => {
    // The user queue is filled twice per packet (its share, then any space membership left); the
    // second fill used to hand out the first fill's messages again, halving a broadcast's real fan-out.
    const queues = new PiggybackQueues({ membershipMaxLength: 10, userMaxLength: 10, userShare: 0.5, transmitLimit: () => 4 });
    queues.user.enqueue(message(7));
    const packets: number[][] = [];
    for (let i = 0; i < 5; i++) packets.push(take(queues, 100));
    assert.deepEqual(packets, [[7], [7], [7], [7], []]);
  });

  test('user broadcasts have their own transmit limit, membership gossip keeps the usual one', () => {
    const queues = new PiggybackQueues({
      membershipMaxLength: 10,
      userMaxLength: 10,
      userShare: 0.5,
      transmitLimit: () => 2,
      userTransmitLimit: () => 6,
    });
    queues.user.enqueue(message(7));
    queues.membership.enqueue(message(8), 'member-8');
    const sent = { user: 0, membership: 0 };
    for (let i = 0; i < 10; i++) {
      for (const id of take(queues, 100)) {
        if (id === 7) sent.user++;
        if (id === 8) sent.membership++;
      }
    }
    assert.deepEqual(sent, { user: 6, membership: 2 });
  });

  test('a message queued with a transmit scale is sent that many times the limit', () => {
    const queue = new TransmitLimitedQueue({ maxLength: 10, transmitLimit: () => 2 });
    queue.enqueue(message(1), 'refute', undefined, 3);
    queue.enqueue(message(2), 'other');
    let sends1 = 0;
    let sends2 = 0;
    for (let i = 0; i < 10; i++) {
      const out = take(queue, 100);
      sends1 += out.filter((id) => id === 1).length;
      sends2 += out.filter((id) => id === 2).length;
    }
    assert.equal(sends1, 6);
    assert.equal(sends2, 2);
  });

  test('drops add up across both queues', () => {
    const queues = new PiggybackQueues({ membershipMaxLength: 1, userMaxLength: 1, userShare: 0.5, transmitLimit: () => 9 });
    queues.user.enqueue(message(1));
    queues.user.enqueue(message(2));
    queues.membership.enqueue(message(3), 'a');
    queues.membership.enqueue(message(4), 'b');
    assert.equal(queues.drops, 2);
  });
});
