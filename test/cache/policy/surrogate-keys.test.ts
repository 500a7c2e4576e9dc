import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_TAG_LENGTH, MAX_TAGS, surrogateKeys } from '../../../src/cache/policy/surrogate-keys.js';
import { fields } from './fixtures.js';

describe('spec §1.2 surrogate keys', () => {
  const cases: [string, Record<string, string | string[]>, string[]][] = [
    ['none', {}, []],
    ['Surrogate-Key is space-separated', { 'surrogate-key': ' a  b\tc ' }, ['a', 'b', 'c']],
    ['Cache-Tag is comma-separated', { 'cache-tag': 'a b, c,,d' }, ['a b', 'c', 'd']],
    ['X-Cache-Tags is space-separated', { 'x-cache-tags': 'x y' }, ['x', 'y']],
    ['Surrogate-Key wins over the others', { 'surrogate-key': 's', 'cache-tag': 'c', 'x-cache-tags': 'x' }, ['s']],
    ['Cache-Tag wins over X-Cache-Tags', { 'cache-tag': 'c', 'x-cache-tags': 'x' }, ['c']],
    ['an empty header does not win', { 'surrogate-key': '  ', 'cache-tag': ' , ', 'x-cache-tags': 'x' }, ['x']],
    ['duplicates removed, first kept, case kept', { 'surrogate-key': 'b A a b' }, ['b', 'A', 'a']],
    ['several lines combined', { 'surrogate-key': ['a b', 'c'] }, ['a', 'b', 'c']],
    ['an over-long tag is dropped', { 'surrogate-key': `a ${'x'.repeat(MAX_TAG_LENGTH + 1)} b` }, ['a', 'b']],
  ];
  for (const [name, headers, expected] of cases) {
    test(name, () => assert.deepEqual(surrogateKeys(fields(headers)), expected));
  }
  test(`at most ${MAX_TAGS} tags are kept`, () => {
    const many = Array.from({ length: MAX_TAGS + 10 }, (_, i) => `t${i}`);
    const tags = surrogateKeys(fields({ 'surrogate-key': many.join(' ') }));
    assert.equal(tags.length, MAX_TAGS);
    assert.deepEqual(tags, many.slice(0, MAX_TAGS));
  });
});
