// The benchmark's median and its bootstrap interval: the figures issue 2's target is judged by.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median, medianInterval } from '../../bench/support/median-interval.js';

test('the median of an odd and an even count of rounds', () => {
  assert.equal(median([0.9, 0.7, 0.8]), 0.8);
  assert.equal(median([9, 7, 8, 10]), 8.5);
  assert.throws(() => median([]), /no values/);
});

test('rounds that agree give an interval of their one value', () => {
  assert.deepEqual(medianInterval([0.8, 0.8, 0.8, 0.8]), { low: 0.8, high: 0.8 });
});

test('the interval holds the median, lies within the rounds, and widens with their spread', () => {
  const tight = [0.79, 0.8, 0.81, 0.8, 0.82, 0.78, 0.8, 0.81, 0.79, 0.8];
  const loose = [0.6, 0.8, 1.0, 0.7, 0.9, 0.65, 0.8, 0.95, 0.75, 0.85];
  for (const rounds of [tight, loose]) {
    const { low, high } = medianInterval(rounds);
    assert.ok(low <= median(rounds) && median(rounds) <= high, `${low} ≤ ${median(rounds)} ≤ ${high}`);
    assert.ok(low >= Math.min(...rounds) && high <= Math.max(...rounds));
  }
  const width = (rounds: number[]): number => medianInterval(rounds).high - medianInterval(rounds).low;
  assert.ok(width(loose) > 3 * width(tight), `${width(loose)} against ${width(tight)}`);
});

test('the same rounds always give the same interval', () => {
  const rounds = [0.61, 0.7, 0.93, 0.76, 0.84, 0.81, 0.88];
  assert.deepEqual(medianInterval(rounds), medianInterval(rounds));
});
