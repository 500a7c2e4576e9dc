import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRandom, randomSeed } from '../../cluster/seeded-random.js';

function draws(seed: number | string, count: number): number[] {
  const random = createRandom(seed);
  return Array.from({ length: count }, () => random.next());
}

describe('createRandom', () => {
  test('the same seed gives the same sequence', () => {
    assert.deepEqual(draws(42, 20), draws(42, 20));
    assert.deepEqual(draws('run-7', 20), draws('run-7', 20));
  });

  test('different seeds, and a number versus its text, give different sequences', () => {
    assert.notDeepEqual(draws(1, 10), draws(2, 10));
    assert.notDeepEqual(draws(1, 10), draws('1', 10));
  });

  test('next stays in [0, 1) and int in [0, bound) with every value reachable', () => {
    const random = createRandom('range');
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) {
      const x = random.next();
      assert.ok(x >= 0 && x < 1);
      const k = random.int(7);
      assert.ok(Number.isInteger(k) && k >= 0 && k < 7);
      seen.add(k);
    }
    assert.equal(seen.size, 7);
  });

  test('int draws are roughly uniform', () => {
    const random = createRandom('uniform');
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 100_000; i++) counts[random.int(10)]! += 1;
    for (const count of counts) assert.ok(count > 9_000 && count < 11_000, `bucket count ${count}`);
  });

  test('int rejects bounds that are not positive integers', () => {
    const random = createRandom(0);
    assert.throws(() => random.int(0), RangeError);
    assert.throws(() => random.int(2.5), RangeError);
  });

  test('a fork depends only on seed and label, not on draws made by its parent', () => {
    const a = createRandom(9);
    const b = createRandom(9);
    for (let i = 0; i < 100; i++) b.next();
    const forkA = a.fork('membership');
    const forkB = b.fork('membership');
    assert.deepEqual(
      Array.from({ length: 10 }, () => forkA.next()),
      Array.from({ length: 10 }, () => forkB.next()),
    );
    const other = createRandom(9).fork('network');
    assert.notEqual(createRandom(9).fork('membership').next(), other.next());
  });

  test('randomSeed returns a safe non-negative integer that varies', () => {
    const seeds = new Set(Array.from({ length: 5 }, () => randomSeed()));
    for (const seed of seeds) assert.ok(Number.isSafeInteger(seed) && seed >= 0);
    assert.ok(seeds.size > 1);
  });
});
