// Which host regexes the lazy check may answer with a map lookup: only those RE2 matches against
// exactly one string, checked here against RE2 itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import RE2 from 're2';
import { literalHost } from '../../src/invalidation/literal-host.js';

test('a host regex is a literal only when RE2 matches it against exactly that host', () => {
  const cases: [pattern: string, literal: string | undefined][] = [
    ['^shop\\.example$', 'shop.example'],
    ['^shop-1\\.example:8080$', 'shop-1.example:8080'],
    ['^\\[::1\\]:8080$', '[::1]:8080'],
    ['^Shop\\.Example$', 'Shop.Example'],
    ['^shop.example$', undefined], // an unescaped dot matches any character
    ['shop\\.example$', undefined], // not anchored at the start
    ['^shop\\.example', undefined], // not anchored at the end
    ['^shop\\.example\\$', undefined], // the final $ is escaped: a literal "$", not an anchor
    ['^shop\\.examples?$', undefined],
    ['^(shop)\\.example$', undefined],
    ['^shop\\dexample$', undefined], // \d is a class, not an escaped character
    ['^$', ''],
    ['^', undefined],
  ];
  for (const [pattern, literal] of cases) {
    assert.equal(literalHost(pattern), literal, pattern);
    if (literal === undefined) continue;
    const re = new RE2(pattern);
    assert.ok(re.test(literal), `${pattern} matches ${literal}`);
    for (const other of [`${literal}x`, `x${literal}`, literal.toLowerCase() === literal ? literal.toUpperCase() : literal.toLowerCase()]) {
      if (other !== literal) assert.equal(re.test(other), false, `${pattern} does not match ${other}`);
    }
  }
});
