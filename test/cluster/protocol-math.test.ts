import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  expectedSuspicionConfirmations,
  maxSuspicionTimeoutMs,
  minSuspicionTimeoutMs,
  remainingSuspicionTimeMs,
} from '../../cluster/math/suspicion-timeout.js';
import { retransmitLimit } from '../../cluster/math/retransmit-limit.js';
import { nextAwarenessScore, scaleByAwareness } from '../../cluster/math/awareness.js';
import { scaledPushPullIntervalMs } from '../../cluster/math/push-pull-scale.js';

describe('minSuspicionTimeoutMs (memberlist suspicionTimeout)', () => {
  const table: [mult: number, n: number, intervalMs: number, expected: number][] = [
    [4, 0, 1000, 4000],
    [4, 1, 1000, 4000],
    [4, 5, 1000, 4000], // log10(5) < 1, so the floor of one log unit applies
    [4, 10, 1000, 4000],
    [4, 100, 1000, 8000],
    [4, 1000, 1000, 12000],
    [3, 1000, 200, 1800],
    [4, 50, 1000, 6795], // 4 * 1.69897 * 1000
  ];
  for (const [mult, n, intervalMs, expected] of table) {
    test(`mult ${mult}, ${n} members, interval ${intervalMs} ms -> ${expected} ms`, () => {
      assert.equal(minSuspicionTimeoutMs(mult, n, intervalMs), expected);
    });
  }

  test('max is the multiple of min', () => {
    assert.equal(maxSuspicionTimeoutMs(6, 4000), 24000);
  });

  test('never shrinks as the cluster grows', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 1, max: 1000 }), (n, extra) => {
        return minSuspicionTimeoutMs(4, n + extra, 1000) >= minSuspicionTimeoutMs(4, n, 1000);
      }),
    );
  });
});

describe('expectedSuspicionConfirmations', () => {
  const table: [mult: number, n: number, expected: number][] = [
    [4, 1, 0],
    [4, 3, 0], // n - 2 = 1 < 2: not enough members to confirm
    [4, 4, 2],
    [4, 1000, 2],
    [6, 100, 4],
    [1, 100, 0],
  ];
  for (const [mult, n, expected] of table) {
    test(`mult ${mult}, ${n} members -> ${expected}`, () => {
      assert.equal(expectedSuspicionConfirmations(mult, n), expected);
    });
  }
});

describe('remainingSuspicionTimeMs (memberlist remainingSuspicionTime)', () => {
  // Cases from memberlist suspicion_test.go TestSuspicion_remainingSuspicionTime.
  const table: [n: number, k: number, elapsedMs: number, minMs: number, maxMs: number, expected: number][] = [
    [0, 3, 0, 2000, 30000, 30000],
    [1, 3, 2000, 2000, 30000, 14000],
    [2, 3, 3000, 2000, 30000, 4810],
    [3, 3, 4000, 2000, 30000, -2000],
    [4, 3, 5000, 2000, 30000, -3000],
    [5, 3, 10000, 2000, 30000, -8000],
  ];
  for (const [n, k, elapsedMs, minMs, maxMs, expected] of table) {
    test(`${n} of ${k} confirmations after ${elapsedMs} ms -> ${expected} ms`, () => {
      assert.equal(remainingSuspicionTimeMs(n, k, elapsedMs, minMs, maxMs), expected);
    });
  }

  test('with no confirmations expected the timeout is the minimum', () => {
    assert.equal(remainingSuspicionTimeMs(0, 0, 500, 4000, 24000), 3500);
  });

  test('the total timeout stays within [min, max] and never grows with confirmations', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 10 }),
        (k, confirmations, minMs, factor) => {
          const maxMs = minMs * factor;
          const total = remainingSuspicionTimeMs(confirmations, k, 0, minMs, maxMs);
          const next = remainingSuspicionTimeMs(confirmations + 1, k, 0, minMs, maxMs);
          return total >= minMs && total <= maxMs && next <= total;
        },
      ),
    );
  });
});

describe('retransmitLimit', () => {
  const table: [mult: number, n: number, expected: number][] = [
    [4, 0, 0],
    [4, 1, 4],
    [4, 9, 4],
    [4, 10, 8],
    [4, 99, 8],
    [4, 100, 12],
    [4, 1000, 16],
    [3, 5, 3],
  ];
  for (const [mult, n, expected] of table) {
    test(`mult ${mult}, ${n} members -> ${expected}`, () => {
      assert.equal(retransmitLimit(mult, n), expected);
    });
  }
});

describe('local health awareness', () => {
  const table: [score: number, delta: number, max: number, expected: number][] = [
    [0, -1, 8, 0],
    [0, 1, 8, 1],
    [6, 3, 8, 7],
    [7, -1, 8, 6],
    [3, 0, 8, 3],
    [0, 5, 1, 0], // a multiplier of 1 disables awareness
  ];
  for (const [score, delta, max, expected] of table) {
    test(`score ${score} + ${delta} (max multiplier ${max}) -> ${expected}`, () => {
      assert.equal(nextAwarenessScore(score, delta, max), expected);
    });
  }

  test('scaling stretches by score + 1', () => {
    assert.equal(scaleByAwareness(1000, 0), 1000);
    assert.equal(scaleByAwareness(500, 7), 4000);
  });
});

describe('scaledPushPullIntervalMs (memberlist pushPullScale)', () => {
  const table: [n: number, expected: number][] = [
    [1, 30_000],
    [32, 30_000],
    [33, 60_000],
    [64, 60_000],
    [65, 90_000],
    [1000, 180_000],
  ];
  for (const [n, expected] of table) {
    test(`${n} members -> ${expected} ms`, () => {
      assert.equal(scaledPushPullIntervalMs(30_000, n), expected);
    });
  }
});
