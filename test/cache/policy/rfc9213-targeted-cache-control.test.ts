import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseTargetedDirectives } from '../../../src/cache/policy/targeted-directives.js';
import { effectiveCacheControl, SURROGATE_ONLY_FIELDS } from '../../../src/cache/policy/targeted-cache-control.js';
import { fields } from './fixtures.js';

describe('RFC 9651 §4.2.2 dictionaries as targeted directives (RFC 9213 §2.1)', () => {
  const valid: [string, Record<string, string | null>][] = [
    ['max-age=60', { 'max-age': '60' }],
    ['no-store', { 'no-store': null }],
    ['no-store=?1', { 'no-store': null }],
    ['no-store=?0', { 'no-store': null }],
    ['max-age="60"', {}],
    ['max-age=sixty', {}],
    ['max-age=?1', {}],
    ['s-maxage="60", stale-while-revalidate=1.5, stale-if-error=tok', {}],
    ['public=?0, must-understand=1, immutable="yes"', {}],
    ['public=?1, immutable', { public: null, immutable: null }],
    ['no-cache="set-cookie", private="x-a, x-b"', { 'no-cache': 'set-cookie', private: 'x-a, x-b' }],
    ['no-cache=set-cookie', { 'no-cache': null }],
    ['private=1, must-revalidate=?0, proxy-revalidate="x"', { private: null, 'must-revalidate': null, 'proxy-revalidate': null }],
    ['x-ext="a", y-ext=tok, z-ext=5', { 'x-ext': 'a', 'y-ext': 'tok', 'z-ext': '5' }],
    ['max-age=60, private="set-cookie"', { 'max-age': '60', private: 'set-cookie' }],
    ['max-age=10, max-age=20', { 'max-age': '20' }],
    ['max-age=60;a=1, public', { 'max-age': '60', public: null }],
    ['max-age=1.5, public', { public: null }],
    ['max-age=-5', {}],
    // The parser gives Integers and Decimals alike as numbers: a Decimal with no fraction reads as its Integer.
    ['max-age=60.0', { 'max-age': '60' }],
    // RFC 9651's Date and Display String are valid items that no cache directive takes.
    ['max-age=5, y=%"caf%c3%a9", x=@1659578233', { 'max-age': '5' }],
    ['x=(a b), y=:AQI=:, z=tok/en', { z: 'tok/en' }],
    ['   max-age=60   ', { 'max-age': '60' }],
    ['none', { none: null }],
    ['', {}],
  ];
  for (const [input, expected] of valid) {
    test(`valid: ${JSON.stringify(input)}`, () => {
      const parsed = parseTargetedDirectives(input);
      assert.ok(parsed !== undefined);
      assert.deepEqual(Object.fromEntries(parsed), expected);
    });
  }
  const invalid = ['Max-Age=60', 'max-age=60,', 'max-age=60 public', 'max-age="unterminated', 'a=?2', 'a=1234567890123456', 'a="\u00e9"', 'a=(b', ',a'];
  for (const input of invalid) {
    test(`invalid: ${JSON.stringify(input)}`, () => assert.equal(parseTargetedDirectives(input), undefined));
  }
});

describe('RFC 9213 §2.2 target list precedence', () => {
  const cases: [string, Record<string, string>, string, number | undefined][] = [
    ['Cache-Control alone', { 'cache-control': 'max-age=10' }, 'cache-control', 10_000],
    ['CDN-Cache-Control beats the others', { 'cdn-cache-control': 'max-age=30', 'surrogate-control': 'max-age=20', 'cache-control': 'max-age=10' }, 'cdn-cache-control', 30_000],
    ['Surrogate-Control beats Cache-Control', { 'surrogate-control': 'max-age=20', 'cache-control': 'no-store' }, 'surrogate-control', 20_000],
    ['an invalid CDN-Cache-Control is ignored', { 'cdn-cache-control': 'Max-Age=30', 'cache-control': 'max-age=10' }, 'cache-control', 10_000],
    ['an empty CDN-Cache-Control is ignored', { 'cdn-cache-control': '  ', 'surrogate-control': 'max-age=20' }, 'surrogate-control', 20_000],
    ['an empty Surrogate-Control is ignored', { 'surrogate-control': ' , ', 'cache-control': 'max-age=10' }, 'cache-control', 10_000],
    ['a valid field without usable members still governs', { 'cdn-cache-control': 'none', 'cache-control': 'max-age=10' }, 'cdn-cache-control', undefined],
    ['no cache control at all', {}, 'cache-control', undefined],
  ];
  for (const [name, headers, source, maxAgeMs] of cases) {
    test(name, () => {
      const control = effectiveCacheControl(fields(headers));
      assert.equal(control.source, source);
      assert.equal(control.directives.maxAgeMs, maxAgeMs);
    });
  }
  test('a targeted field hides Cache-Control no-store and private from svc', () => {
    const control = effectiveCacheControl(fields({ 'cdn-cache-control': 'max-age=60', 'cache-control': 'private, no-store' }));
    assert.equal(control.directives.noStore, false);
    assert.equal(control.directives.private, false);
  });
  test('Surrogate-Control max-age=N+M reads M as stale-if-error (Edge Architecture 1.0)', () => {
    const control = effectiveCacheControl(fields({ 'surrogate-control': 'max-age=60+30' }));
    assert.equal(control.directives.maxAgeMs, 60_000);
    assert.equal(control.directives.staleIfErrorMs, 30_000);
  });
  test('Surrogate-Control device targeting (;name) is not supported: the value is invalid, so stale', () => {
    const control = effectiveCacheControl(fields({ 'surrogate-control': 'max-age=60;edge' }));
    assert.equal(control.source, 'surrogate-control');
    assert.equal(control.directives.maxAgeMs, 0);
  });
  test('an explicit stale-if-error beats the +M extension', () => {
    const control = effectiveCacheControl(fields({ 'surrogate-control': 'max-age=60+30, stale-if-error=5' }));
    assert.equal(control.directives.staleIfErrorMs, 5_000);
  });
});

test('surrogate-only fields: Surrogate-Control, Surrogate-Key and X-Cache-Tags are dropped, CDN-Cache-Control and Cache-Tag reach clients', () => {
  assert.deepEqual([...SURROGATE_ONLY_FIELDS].sort(), ['surrogate-control', 'surrogate-key', 'x-cache-tags']);
  assert.equal(SURROGATE_ONLY_FIELDS.has('cdn-cache-control'), false);
  assert.equal(SURROGATE_ONLY_FIELDS.has('cache-tag'), false);
});
