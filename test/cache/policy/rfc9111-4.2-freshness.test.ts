import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ageSeconds, correctedInitialAgeMs, currentAgeMs } from '../../../src/cache/policy/age.js';
import { describeResponse } from '../../../src/cache/policy/describe-response.js';
import { DEFAULT_HEURISTIC_MAX_MS, freshnessLifetime, type FreshnessOptions, type FreshnessSource } from '../../../src/cache/policy/freshness.js';
import { parseHttpDate } from '../../../src/http/http-date.js';
import { effectiveCacheControl } from '../../../src/cache/policy/targeted-cache-control.js';
import { entry, fields, httpDate, T0 } from './fixtures.js';

describe('RFC 9110 §5.6.7 HTTP-date', () => {
  const expected = Date.UTC(1994, 10, 6, 8, 49, 37);
  const cases: [string, number | undefined][] = [
    ['Sun, 06 Nov 1994 08:49:37 GMT', expected],
    ['Sunday, 06-Nov-94 08:49:37 GMT', expected],
    ['Sun Nov  6 08:49:37 1994', expected],
    ['  Sun, 06 Nov 1994 08:49:37 GMT  ', expected],
    ['Thursday, 01-Jan-30 00:00:00 GMT', Date.UTC(2030, 0, 1)],
    ['Sun, 06 Nov 1994 08:49:37 UTC', undefined],
    ['sun, 06 nov 1994 08:49:37 gmt', expected],
    ['SUNDAY, 06-NOV-94 08:49:37 GMT', expected],
    ['sun nov  6 08:49:37 1994', expected],
    ['Sun, 06 Nov 1994 08:49:37 +0000', undefined],
    ['Sun,  06 Nov 1994 08:49:37 GMT', undefined],
    ['Sun, 31 Feb 1994 08:49:37 GMT', undefined],
    ['Sun, 06 Nov 1994 24:49:37 GMT', undefined],
    ['Sun, 06 Foo 1994 08:49:37 GMT', undefined],
    ['0', undefined],
    ['-1', undefined],
    ['', undefined],
  ];
  for (const [input, ms] of cases) {
    test(JSON.stringify(input), () => assert.equal(parseHttpDate(input), ms));
  }
  test('absent', () => assert.equal(parseHttpDate(undefined), undefined));
});

describe('RFC 9111 §4.2.1 freshness lifetime', () => {
  const date = httpDate(T0);
  const cases: [string, number, Record<string, string>, FreshnessOptions, number, FreshnessSource][] = [
    ['s-maxage beats max-age and Expires', 200, { 'cache-control': 'max-age=10, s-maxage=20', expires: httpDate(T0 + 99_000), date }, {}, 20_000, 's-maxage'],
    ['max-age beats Expires', 200, { 'cache-control': 'max-age=10', expires: httpDate(T0 + 99_000), date }, {}, 10_000, 'max-age'],
    ['Expires − Date', 200, { expires: httpDate(T0 + 30_000), date }, {}, 30_000, 'expires'],
    ['Expires without Date uses the receipt time', 200, { expires: httpDate(T0 + 30_000) }, {}, 30_000, 'expires'],
    ['Expires in the past', 200, { expires: httpDate(T0 - 30_000), date }, {}, 0, 'expires'],
    ['invalid Expires is already expired (§5.3)', 200, { expires: '0', date, 'last-modified': httpDate(T0 - 1e6) }, {}, 0, 'expires'],
    ['invalid max-age is stale', 200, { 'cache-control': 'max-age=soon' }, {}, 0, 'max-age'],
    ['several Expires lines combined do not parse: already expired (§4.2.1)', 200, { expires: `${httpDate(T0 + 30_000)}, ${httpDate(T0 + 60_000)}`, date }, {}, 0, 'expires'],
    ['ttl_override beats everything', 200, { 'cache-control': 'no-store, max-age=10' }, { ttlOverrideMs: 5_000 }, 5_000, 'ttl_override'],
    ['heuristic: 10% of Date − Last-Modified', 200, { date, 'last-modified': httpDate(T0 - 1_000_000) }, {}, 100_000, 'heuristic'],
    ['heuristic capped at 24 h', 200, { date, 'last-modified': httpDate(T0 - 365 * 86_400_000) }, {}, DEFAULT_HEURISTIC_MAX_MS, 'heuristic'],
    ['heuristic with custom fraction and cap', 200, { date, 'last-modified': httpDate(T0 - 1_000_000) }, { heuristicFraction: 0.5, heuristicMaxMs: 300_000 }, 300_000, 'heuristic'],
    ['no heuristic for a status not cacheable by default', 302, { date, 'last-modified': httpDate(T0 - 1_000_000) }, {}, 0, 'none'],
    ['no heuristic for public with a status not heuristically cacheable (issue 14)', 302, { 'cache-control': 'public', date, 'last-modified': httpDate(T0 - 1_000_000) }, {}, 0, 'none'],
    ['a 503 with max-age is capped at max_error_ttl (issue 14)', 503, { 'cache-control': 'max-age=3600' }, { maxErrorTtlMs: 10_000 }, 10_000, 'max-age'],
    ['a 400 with Expires is capped at max_error_ttl', 400, { expires: httpDate(T0 + 3_600_000), date }, { maxErrorTtlMs: 10_000 }, 10_000, 'expires'],
    ['a shorter error lifetime stays as it is', 500, { 'cache-control': 's-maxage=3' }, { maxErrorTtlMs: 10_000 }, 3_000, 's-maxage'],
    ['a heuristically cacheable 404 is not capped', 404, { 'cache-control': 'max-age=3600' }, { maxErrorTtlMs: 10_000 }, 3_600_000, 'max-age'],
    ['a 302 is not an error: not capped', 302, { 'cache-control': 'max-age=3600' }, { maxErrorTtlMs: 10_000 }, 3_600_000, 'max-age'],
    ['no heuristic when Last-Modified is after Date', 200, { date, 'last-modified': httpDate(T0 + 1_000) }, {}, 0, 'none'],
    ['nothing at all', 200, {}, {}, 0, 'none'],
    ['targeted max-age beats Cache-Control', 200, { 'cdn-cache-control': 'max-age=50', 'cache-control': 'max-age=10' }, {}, 50_000, 'max-age'],
    ['a targeted field makes svc ignore Expires (RFC 9213 §2.2)', 200, { 'cdn-cache-control': 'public', expires: httpDate(T0 + 30_000), date }, {}, 0, 'none'],
  ];
  for (const [name, status, headers, options, lifetimeMs, source] of cases) {
    test(name, () => {
      const lookup = fields(headers);
      const freshness = freshnessLifetime(status, lookup, effectiveCacheControl(lookup), T0, options);
      assert.equal(freshness.source, source);
      assert.equal(freshness.lifetimeMs, lifetimeMs);
    });
  }
});

describe('RFC 9111 §4.2.3 age', () => {
  const cases: [string, string | undefined, string | undefined, number, number, number][] = [
    ['no Age, no Date: the response delay', undefined, undefined, T0 - 500, T0, 500],
    ['Date in the past gives the apparent age', undefined, httpDate(T0 - 10_000), T0 - 100, T0, 10_000],
    ['Age plus the response delay', '30', httpDate(T0), T0 - 2_000, T0, 32_000],
    ['the larger of the two', '5', httpDate(T0 - 60_000), T0, T0, 60_000],
    ['Date in the future gives no apparent age', undefined, httpDate(T0 + 60_000), T0, T0, 0],
    ['invalid Age counts as 0', 'abc', undefined, T0, T0, 0],
    ['a list of Ages keeps the first', '7, 9', undefined, T0, T0, 7_000],
    ['a clock that stepped back gives no negative delay', undefined, undefined, T0 + 1_000, T0, 0],
  ];
  for (const [name, age, date, requestTimeMs, responseTimeMs, expected] of cases) {
    test(name, () => assert.equal(correctedInitialAgeMs(age, date, requestTimeMs, responseTimeMs), expected));
  }
  test('current_age grows with resident time', () => {
    const stored = entry({ correctedInitialAgeMs: 3_000, responseTimeMs: T0 });
    assert.equal(currentAgeMs(stored, T0 + 10_000), 13_000);
    assert.equal(currentAgeMs(stored, T0 - 10_000), 3_000);
  });
  test('the Age header value is whole seconds, rounded down and capped', () => {
    assert.equal(ageSeconds(entry({ correctedInitialAgeMs: 1_999, responseTimeMs: T0 }), T0), 1);
    assert.equal(ageSeconds(entry({ correctedInitialAgeMs: 0, responseTimeMs: T0 }), T0 + 61_500), 61);
    assert.equal(ageSeconds(entry({ correctedInitialAgeMs: 1e13, responseTimeMs: T0 }), T0), 2147483648);
  });
});

describe('describeResponse: the policy fields of a CacheEntry', () => {
  test('a plain cacheable response', () => {
    const headers = fields({
      'cache-control': 'max-age=60, stale-while-revalidate=30, stale-if-error=600',
      date: httpDate(T0 - 2_000),
      etag: ' "v1" ',
      'last-modified': httpDate(T0 - 86_400_000),
    });
    assert.deepEqual(describeResponse(headers, { status: 200, requestTimeMs: T0 - 100, responseTimeMs: T0 }), {
      correctedInitialAgeMs: 2_000,
      freshnessLifetimeMs: 60_000,
      staleWhileRevalidateMs: 30_000,
      staleIfErrorMs: 600_000,
      mustRevalidate: false,
      noCache: false,
      etag: '"v1"',
      lastModified: httpDate(T0 - 86_400_000),
    });
  });
  test('route stale windows replace the directives', () => {
    const headers = fields({ 'cache-control': 'max-age=60, stale-while-revalidate=30, stale-if-error=600' });
    const described = describeResponse(headers, { status: 200, requestTimeMs: T0, responseTimeMs: T0, staleWhileRevalidateMs: 5_000, staleIfErrorMs: 0 });
    assert.equal(described.staleWhileRevalidateMs, 5_000);
    assert.equal(described.staleIfErrorMs, 0);
  });
  for (const directive of ['must-revalidate', 'proxy-revalidate', 's-maxage=60']) {
    test(`${directive} forbids stale serving, whatever the route says`, () => {
      const headers = fields({ 'cache-control': `max-age=60, stale-if-error=600, ${directive}` });
      const described = describeResponse(headers, { status: 200, requestTimeMs: T0, responseTimeMs: T0, staleWhileRevalidateMs: 5_000 });
      assert.equal(described.mustRevalidate, true);
      assert.equal(described.staleWhileRevalidateMs, 0);
      assert.equal(described.staleIfErrorMs, 0);
    });
  }
  test('no-cache is recorded and forbids stale serving', () => {
    const described = describeResponse(fields({ 'cache-control': 'no-cache, stale-if-error=60', etag: '"a"' }), { status: 200, requestTimeMs: T0, responseTimeMs: T0 });
    assert.equal(described.noCache, true);
    assert.equal(described.staleIfErrorMs, 0);
  });
  test('ttl_override: lifetime is the override plus the age already had; origin directives are disregarded', () => {
    const headers = fields({ 'cache-control': 'no-cache, must-revalidate, stale-if-error=600', age: '40' });
    const described = describeResponse(headers, { status: 200, requestTimeMs: T0, responseTimeMs: T0, ttlOverrideMs: 30_000, staleIfErrorMs: 10_000 });
    assert.equal(described.correctedInitialAgeMs, 40_000);
    assert.equal(described.freshnessLifetimeMs, 70_000);
    assert.equal(described.noCache, false);
    assert.equal(described.mustRevalidate, false);
    assert.equal(described.staleIfErrorMs, 10_000);
    assert.equal(described.staleWhileRevalidateMs, 0);
  });
  test('a precomputed control is used instead of the headers', () => {
    const headers = fields({ 'cache-control': 'max-age=60' });
    const control = effectiveCacheControl(fields({ 'cache-control': 'max-age=5' }));
    assert.equal(describeResponse(headers, { status: 200, requestTimeMs: T0, responseTimeMs: T0, control }).freshnessLifetimeMs, 5_000);
  });
});
