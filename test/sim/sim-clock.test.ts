import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRandom } from '../../cluster/seeded-random.js';
import { ClockReentryError, ForeignTimerError, SimClock, type EventOwner, type SimEvent } from '../../sim/sim-clock.js';

describe('SimClock', () => {
  test('fires events in time order and breaks ties by insertion order', async () => {
    const clock = new SimClock();
    const fired: string[] = [];
    clock.setTimer(20, () => fired.push('b@20'));
    clock.setTimer(10, () => fired.push('a@10'));
    clock.setTimer(20, () => fired.push('c@20'));
    clock.setTimer(0, () => fired.push('now'));
    clock.setTimer(-5, () => fired.push('negative'));
    const count = await clock.runUntil(100);
    assert.deepEqual(fired, ['now', 'negative', 'a@10', 'b@20', 'c@20']);
    assert.equal(count, 5);
    assert.equal(clock.now(), 100);
  });

  test('agrees with a sort over thousands of random times', async () => {
    const clock = new SimClock();
    const random = createRandom('heap');
    const expected: { timeMs: number; index: number }[] = [];
    const fired: number[] = [];
    for (let index = 0; index < 5000; index++) {
      const timeMs = random.int(1000);
      expected.push({ timeMs, index });
      clock.setTimer(timeMs, () => fired.push(index));
    }
    expected.sort((a, b) => a.timeMs - b.timeMs || a.index - b.index);
    await clock.runUntil(1000);
    assert.deepEqual(
      fired,
      expected.map((entry) => entry.index),
    );
  });

  test('a cleared timer never fires, and clearing twice or after firing is harmless', async () => {
    const clock = new SimClock();
    const fired: number[] = [];
    const first = clock.setTimer(5, () => fired.push(1));
    const second = clock.setTimer(10, () => fired.push(2));
    clock.clearTimer(second);
    clock.clearTimer(second);
    await clock.runUntil(20);
    clock.clearTimer(first);
    assert.deepEqual(fired, [1]);
    assert.equal(clock.stats().cancelledEvents, 1);
    assert.throws(() => clock.clearTimer({ id: 1 }), ForeignTimerError);
  });

  test('runUntil stops at its bound and runFor continues from the current time', async () => {
    const clock = new SimClock();
    const times: number[] = [];
    for (const delayMs of [10, 30, 50]) clock.setTimer(delayMs, () => times.push(clock.now()));
    assert.equal(await clock.runUntil(30), 2);
    assert.deepEqual(times, [10, 30]);
    assert.equal(clock.now(), 30);
    assert.equal(await clock.runFor(15), 0);
    assert.equal(clock.now(), 45);
    assert.equal(await clock.runFor(5), 1);
    assert.deepEqual(times, [10, 30, 50]);
    assert.equal(clock.stats().firedEvents, 3);
    assert.equal(clock.stats().queuedEvents, 0);
  });

  test('promise continuations run at the virtual time of the event that settled them', async () => {
    const clock = new SimClock();
    const seen: number[] = [];
    const wait = (delayMs: number) =>
      new Promise<void>((resolve) => {
        clock.setTimer(delayMs, () => {
          clock.noteAsyncWork();
          resolve();
        });
      });
    const chain = (async () => {
      await wait(10);
      seen.push(clock.now());
      await (async () => {
        await Promise.resolve();
        await wait(5);
      })();
      seen.push(clock.now());
    })();
    clock.setTimer(12, () => seen.push(-clock.now()));
    await clock.runUntil(100);
    await chain;
    assert.deepEqual(seen, [10, -12, 15]);
  });

  test('a paused owner holds its events and a dead one drops them', async () => {
    const clock = new SimClock();
    const owner: EventOwner & { status: EventOwner['status']; held: SimEvent[] } = { status: 'running', held: [] };
    const fired: string[] = [];
    clock.scheduleTimer(10, () => fired.push(`a@${clock.now()}`), owner);
    clock.scheduleTimer(20, () => fired.push(`b@${clock.now()}`), owner);
    owner.status = 'paused';
    await clock.runUntil(50);
    assert.equal(fired.length, 0);
    assert.equal(owner.held.length, 2);
    owner.status = 'running';
    clock.release(owner.held.splice(0));
    await clock.runFor(0);
    assert.deepEqual(fired, ['a@50', 'b@50']);
    clock.scheduleTimer(10, () => fired.push('never'), owner);
    owner.status = 'dead';
    await clock.runFor(100);
    assert.equal(fired.length, 2);
    assert.equal(clock.stats().droppedEvents, 1);
  });

  test('refuses to run inside its own run', async () => {
    const clock = new SimClock();
    let nested: Promise<number> | undefined;
    clock.setTimer(1, () => {
      nested = clock.runUntil(10);
    });
    await clock.runUntil(5);
    assert.ok(nested !== undefined);
    await assert.rejects(nested, ClockReentryError);
  });
});
