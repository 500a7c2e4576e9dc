import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { normaliseVaryValue, variantKey, varyNames } from '../../../src/cache/policy/vary.js';
import { fields } from './fixtures.js';

describe('RFC 9111 §4.1 Vary names', () => {
  const cases: [string, string | string[] | undefined, string[], boolean][] = [
    ['absent', undefined, [], false],
    ['lower-cased and trimmed', ' Accept-Encoding ,Accept-Language', ['accept-encoding', 'accept-language'], false],
    ['de-duplicated', 'Accept, accept, ACCEPT', ['accept'], false],
    ['several lines', ['Accept', 'Origin'], ['accept', 'origin'], false],
    ['star flagged', 'Accept, *', ['accept'], true],
    ['star alone', '*', [], true],
    ['empty members dropped', ', ,', [], false],
  ];
  for (const [name, value, names, star] of cases) {
    test(name, () => {
      const vary = varyNames(fields(value === undefined ? {} : { vary: value }));
      assert.deepEqual([...vary.names], names);
      assert.equal(vary.star, star);
    });
  }
});

describe('RFC 9111 §4.1 request normalisation before keying', () => {
  const same: [string, string, string][] = [
    ['accept-encoding', 'gzip, br', 'BR,gzip'],
    ['accept-encoding', 'gzip;q=1.0, br', 'br , gzip ; q=1.0'],
    ['accept-encoding', 'gzip, gzip, br', 'br, gzip'],
    ['accept-language', 'en-US, fr', 'EN-us,fr'],
    ['accept', 'Text/HTML, application/json;q=0.9', 'text/html,application/json; q=0.9'],
    ['user-agent', 'a  b\tc', ' a b c '],
  ];
  for (const [name, a, b] of same) {
    test(`${name}: ${JSON.stringify(a)} ≡ ${JSON.stringify(b)}`, () => assert.equal(normaliseVaryValue(name, a), normaliseVaryValue(name, b)));
  }
  const different: [string, string, string][] = [
    ['accept-language', 'en, fr', 'fr, en'],
    ['accept', 'text/html;charset=UTF-8', 'text/html;charset=utf-8'],
    ['accept-encoding', 'gzip', 'br'],
    ['cookie', 'a=1', 'A=1'],
  ];
  for (const [name, a, b] of different) {
    test(`${name}: ${JSON.stringify(a)} ≢ ${JSON.stringify(b)}`, () => assert.notEqual(normaliseVaryValue(name, a), normaliseVaryValue(name, b)));
  }
});

describe('normalisation properties', () => {
  const coding = fc.constantFrom('gzip', 'br', 'deflate', 'zstd', 'identity', '*', 'gzip;q=0.5', 'br;q=0');
  const space = fc.constantFrom('', ' ', '  ', '\t');
  test('Accept-Encoding keys ignore order, case, duplicates and whitespace', () => {
    fc.assert(
      fc.property(fc.array(coding, { minLength: 1, maxLength: 6 }), fc.array(space, { minLength: 12, maxLength: 12 }), (codings, spaces) => {
        const plain = codings.join(',');
        const shuffled = [...codings, codings[0] as string]
          .reverse()
          .map((member, i) => `${spaces[i] ?? ''}${i % 2 === 0 ? member.toUpperCase() : member}${spaces[i + 1] ?? ''}`)
          .join(',');
        assert.equal(normaliseVaryValue('accept-encoding', shuffled), normaliseVaryValue('accept-encoding', plain));
      }),
    );
  });
  test('any field: surrounding and repeated whitespace never changes the key', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[!-~]{1,8}$/), { minLength: 1, maxLength: 5 }), space, space, (words, before, after) => {
        assert.equal(normaliseVaryValue('x-any', `${before}${words.join(' \t ')}${after}`), words.join(' '));
      }),
    );
  });
});

describe('RFC 9111 §4.1 secondary keys', () => {
  test('no Vary gives the empty key', () => assert.equal(variantKey([], fields({ accept: 'x' })), ''));
  test('absent and empty fields are different variants', () => {
    const absent = variantKey(['accept-encoding'], fields({}));
    const empty = variantKey(['accept-encoding'], fields({ 'accept-encoding': '' }));
    assert.notEqual(absent, empty);
    assert.notEqual(absent, '');
  });
  test('several lines are combined before normalising', () => {
    assert.equal(
      variantKey(['accept-encoding'], fields({ 'accept-encoding': ['gzip', 'br'] })),
      variantKey(['accept-encoding'], fields({ 'accept-encoding': 'br, gzip' })),
    );
  });
  test('the key follows the order of the names', () => {
    const request = fields({ accept: 'a/b', origin: 'https://x' });
    assert.equal(variantKey(['accept', 'origin'], request), '=a/b\n=https://x');
    assert.equal(variantKey(['origin', 'accept'], request), '=https://x\n=a/b');
  });
  test('fields that are not named do not matter', () => {
    assert.equal(variantKey(['accept'], fields({ accept: 'a/b', cookie: '1' })), variantKey(['accept'], fields({ accept: 'a/b', cookie: '2' })));
  });
});
