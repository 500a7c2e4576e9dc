// The RE2 sets under the lazy check: many patterns answer as each would alone, in few blocks; a
// pattern RE2 refuses in a set is still matched on its own; removed patterns stop matching and
// emptied blocks go; blocks older than the subject, or already checked, are not searched; blocks
// that were costly to compile stop merging.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import RE2 from 're2';
import { MAX_BLOCK_PATTERNS, MERGE_BUDGET_MS, PatternBlocks } from '../../src/invalidation/pattern-blocks.js';

interface Item {
  readonly pattern: string;
  readonly newestMs: number;
  readonly lastSeq: number;
}

/**
 * Blocks whose merges are not bounded by compile time, unless a budget is given: how many blocks the
 * binary counter leaves must not depend on how busy the machine was (a merge's cost is measured).
 */
function blocks(mergeBudgetMs = Infinity): PatternBlocks<Item> {
  return new PatternBlocks<Item>({ newestMs: (item) => item.newestMs, lastSeq: (item) => item.lastSeq }, { mergeBudgetMs });
}

function add(target: PatternBlocks<Item>, pattern: string, at = 0): Item {
  const item = { pattern, newestMs: at, lastSeq: at };
  target.add(pattern, item);
  return item;
}

/** Every item whose pattern matches `subject`, as `some` visits them. */
function matching(target: PatternBlocks<Item>, subject: string, sinceMs = -Infinity, checkedSeq = -Infinity): string[] {
  const found: string[] = [];
  target.some(Buffer.from(subject), sinceMs, checkedSeq, (item) => {
    found.push(item.pattern);
    return false;
  });
  return found.sort();
}

describe('pattern blocks', () => {
  test('thousands of patterns answer exactly as each RE2 alone, from a few sets', () => {
    const target = blocks();
    const patterns: string[] = [];
    for (let i = 0; i < 3000; i += 1) {
      const pattern = [`^/section-${i}/`, `item-${i}$`, `^/p/${i % 97}[0-9]+`, `(a|b)${i}x`][i % 4] as string;
      patterns.push(pattern);
      add(target, pattern);
    }
    // Binary-counter merging: full blocks plus at most one block per smaller size.
    assert.ok(target.blockCount <= 3000 / MAX_BLOCK_PATTERNS + Math.log2(MAX_BLOCK_PATTERNS) + 1, `${target.blockCount} blocks`);
    const singles = patterns.map((pattern) => new RE2(pattern));
    for (const subject of ['/section-12/a', '/p/5123', '/shop/item-7', 'b1234x', '/section-2999/', '/nothing', 'item-40']) {
      const expected = patterns.filter((_, i) => (singles[i] as RE2).test(Buffer.from(subject))).sort();
      assert.deepEqual(matching(target, subject), expected, subject);
    }
  });

  test('a pattern RE2 accepts alone but refuses in a set is still matched', () => {
    const target = blocks();
    // Too large a program for RE2.Set, small enough for RE2 on its own.
    const large = '(\\pL|\\pN){200}x';
    assert.throws(() => new RE2.Set([large], 'u'));
    add(target, '^/a');
    add(target, large);
    add(target, '^/b');
    assert.deepEqual(matching(target, `${'q'.repeat(200)}x`), [large]);
    assert.deepEqual(matching(target, '/b'), ['^/b']);
    assert.deepEqual(matching(target, `/a${'q'.repeat(200)}x`), ['^/a', large].sort());
  });

  test('blocks that were costly to compile are not merged, and still answer', () => {
    const target = blocks(MERGE_BUDGET_MS);
    // Each takes RE2 about 50 ms of CPU time to compile on its own (5 times the budget): no two merge,
    // however fast the machine.
    const costly = Array.from({ length: 4 }, (_, i) => `(\\pL|\\pN){40}${i}`);
    for (const pattern of costly) add(target, pattern);
    assert.equal(target.blockCount, 4);
    // Cheap ones merge among themselves (1+1+1+1 into one block of 4) but not into a costly neighbour.
    for (let i = 0; i < 4; i += 1) add(target, `^/cheap/${i}$`);
    assert.equal(target.blockCount, 5);
    assert.deepEqual(matching(target, `${'q'.repeat(40)}2`), [costly[2]]);
    assert.deepEqual(matching(target, '/cheap/3'), ['^/cheap/3$']);
  });

  test('a removed pattern stops matching at once; an emptied block goes; a sparse one is rebuilt', () => {
    const target = blocks();
    const items = Array.from({ length: 64 }, (_, i) => add(target, `^/x/${i}(/|$)`));
    assert.equal(target.blockCount, 1);
    target.delete(items[5] as Item);
    assert.deepEqual(matching(target, '/x/5'), []);
    assert.deepEqual(matching(target, '/x/6'), ['^/x/6(/|$)']);
    assert.equal(target.size, 63);
    // Past three quarters removed, the block is rebuilt from the live patterns; it keeps answering.
    for (const item of items.slice(6, 60)) target.delete(item);
    assert.deepEqual(matching(target, '/x/59'), []);
    assert.deepEqual(matching(target, '/x/61'), ['^/x/61(/|$)']);
    for (const item of [...items.slice(0, 5), ...items.slice(60)]) target.delete(item);
    assert.equal(target.size, 0);
    assert.equal(target.blockCount, 0);
    assert.deepEqual(matching(target, '/x/61'), []);
  });

  test('blocks whose items are all older than the subject, or all already checked, are not searched', () => {
    const target = blocks();
    for (let i = 0; i < 4; i += 1) add(target, '^/same', 10 + i);
    // A fifth item makes a second block (4 + 1), newer than the first.
    add(target, '^/same', 50);
    assert.equal(target.blockCount, 2);
    assert.equal(matching(target, '/same').length, 5);
    assert.equal(matching(target, '/same', 14).length, 1, 'the block of times 10..13 is skipped');
    assert.equal(matching(target, '/same', 51).length, 0);
    assert.equal(matching(target, '/same', -Infinity, 13).length, 1, 'the block checked through 13 is skipped');
    // A grown item raises its block's bounds.
    const grown = { pattern: '^/grow', newestMs: 0, lastSeq: 0 };
    target.add('^/grow', grown);
    assert.equal(matching(target, '/grow', 100).length, 0);
    Object.assign(grown, { newestMs: 200, lastSeq: 200 });
    target.grew(grown);
    assert.equal(matching(target, '/grow', 100).length, 1);
  });
});
