import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCacheControl, parseDeltaSeconds, parseFieldNameList } from '../../../src/cache/policy/cache-control.js';
import { requestDirectives } from '../../../src/cache/policy/request-directives.js';
import { responseDirectives } from '../../../src/cache/policy/response-directives.js';
import { fields } from './fixtures.js';

describe('RFC 9111 §5.2 Cache-Control parsing', () => {
  const cases: [string, string | undefined, Record<string, string | null>][] = [
    ['absent', undefined, {}],
    ['empty', '', {}],
    ['single', 'no-store', { 'no-store': null }],
    ['names are case-insensitive', 'Max-Age=60, NO-CACHE', { 'max-age': '60', 'no-cache': null }],
    ['token argument', 'max-age=60', { 'max-age': '60' }],
    ['quoted argument accepted for delta-seconds', 'max-age="60"', { 'max-age': '60' }],
    ['quoted-pair unescaped', 'ext="a\\"b\\\\c"', { ext: 'a"b\\c' }],
    ['comma inside a quoted string', 'no-cache="set-cookie, x-a", public', { 'no-cache': 'set-cookie, x-a', public: null }],
    ['whitespace around members and "="', '  public ,  max-age = 5 ', { public: null, 'max-age': '5' }],
    ['empty members skipped', ',,public,,', { public: null }],
    ['first occurrence wins', 'max-age=10, max-age=20', { 'max-age': '10' }],
    ['field lists merge', 'private="a", private="b"', { private: 'a, b' }],
    ['unqualified no-cache wins over a list', 'no-cache="a", no-cache', { 'no-cache': null }],
    ['unqualified no-cache stays unqualified', 'no-cache, no-cache="a"', { 'no-cache': null }],
    ['unterminated quote runs to the end', 'private="a, b', { private: 'a, b' }],
    ['argument case kept', 'ext=MiXeD', { ext: 'MiXeD' }],
    ['empty name skipped', '=5, public', { public: null }],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => {
      assert.deepEqual(Object.fromEntries(parseCacheControl(input)), expected);
    });
  }
});

describe('RFC 9111 §1.2.2 delta-seconds', () => {
  const cases: [string | null | undefined, number | undefined][] = [
    ['0', 0],
    ['60', 60],
    ['007', 7],
    ['2147483648', 2147483648],
    ['99999999999999999999', 2147483648],
    ['-1', undefined],
    ['1.5', undefined],
    ['', undefined],
    [' 5', undefined],
    [null, undefined],
    [undefined, undefined],
  ];
  for (const [input, expected] of cases) {
    test(`${String(input)} → ${String(expected)}`, () => assert.equal(parseDeltaSeconds(input), expected));
  }
});

test('field-name lists are lower-cased, trimmed and de-duplicated', () => {
  assert.deepEqual(parseFieldNameList(' Set-Cookie, x-a,,X-A '), ['set-cookie', 'x-a']);
  assert.deepEqual(parseFieldNameList(null), []);
});

describe('RFC 9111 §5.2.2 response directives', () => {
  test('every directive is read', () => {
    const d = responseDirectives(
      parseCacheControl(
        'max-age=10, s-maxage=20, no-store, no-cache, private, public, must-revalidate, proxy-revalidate, ' +
          'must-understand, immutable, stale-while-revalidate=30, stale-if-error=40',
      ),
    );
    assert.equal(d.maxAgeMs, 10_000);
    assert.equal(d.sMaxAgeMs, 20_000);
    assert.equal(d.noStore, true);
    assert.equal(d.noCache, true);
    assert.equal(d.private, true);
    assert.equal(d.public, true);
    assert.equal(d.mustRevalidate, true);
    assert.equal(d.proxyRevalidate, true);
    assert.equal(d.mustUnderstand, true);
    assert.equal(d.immutable, true);
    assert.equal(d.staleWhileRevalidateMs, 30_000);
    assert.equal(d.staleIfErrorMs, 40_000);
  });
  test('an invalid max-age or s-maxage reads as 0 (stale, §4.2.1)', () => {
    const d = responseDirectives(parseCacheControl('max-age=abc, s-maxage=-1'));
    assert.equal(d.maxAgeMs, 0);
    assert.equal(d.sMaxAgeMs, 0);
  });
  test('an invalid stale window is ignored', () => {
    const d = responseDirectives(parseCacheControl('stale-while-revalidate=x, stale-if-error'));
    assert.equal(d.staleWhileRevalidateMs, undefined);
    assert.equal(d.staleIfErrorMs, undefined);
  });
  test('qualified no-cache and private are field lists, not the unqualified directives', () => {
    const d = responseDirectives(parseCacheControl('no-cache="Set-Cookie", private="x-user"'));
    assert.equal(d.noCache, false);
    assert.equal(d.private, false);
    assert.deepEqual(d.noCacheFields, ['set-cookie']);
    assert.deepEqual(d.privateFields, ['x-user']);
  });
  test('absent directives are false or undefined', () => {
    const d = responseDirectives(parseCacheControl('x-ext'));
    assert.equal(d.maxAgeMs, undefined);
    assert.equal(d.noStore, false);
    assert.equal(d.public, false);
  });
});

describe('RFC 9111 §5.2.1 request directives and §5.4 Pragma', () => {
  test('every request directive is read', () => {
    const d = requestDirectives(fields({ 'cache-control': 'max-age=5, max-stale=7, min-fresh=3, no-cache, no-store, only-if-cached' }));
    assert.deepEqual(d, { maxAgeMs: 5000, maxStaleMs: 7000, minFreshMs: 3000, noCache: true, noStore: true, onlyIfCached: true });
  });
  test('max-stale without a value accepts any staleness', () => {
    assert.equal(requestDirectives(fields({ 'cache-control': 'max-stale' })).maxStaleMs, Infinity);
  });
  test('invalid arguments are ignored', () => {
    const d = requestDirectives(fields({ 'cache-control': 'max-age=x, min-fresh=-1, max-stale=1.5' }));
    assert.equal(d.maxAgeMs, undefined);
    assert.equal(d.minFreshMs, undefined);
    assert.equal(d.maxStaleMs, undefined);
  });
  test('Pragma: no-cache counts when Cache-Control is absent', () => {
    assert.equal(requestDirectives(fields({ pragma: 'x, No-Cache' })).noCache, true);
  });
  test('Pragma is ignored when Cache-Control is present', () => {
    assert.equal(requestDirectives(fields({ pragma: 'no-cache', 'cache-control': 'max-age=5' })).noCache, false);
  });
  test('Pragma without no-cache does nothing', () => {
    assert.equal(requestDirectives(fields({ pragma: 'no-cache-please' })).noCache, false);
  });
});
