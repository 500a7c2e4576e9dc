import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { evaluateConditional, notModifiedFields, type ConditionalOutcome } from '../../../src/cache/policy/conditional.js';
import { entityTagListMatches, strongEntityTagsMatch } from '../../../src/cache/policy/entity-tag.js';
import { entry, fields, httpDate, T0 } from './fixtures.js';

describe('RFC 9110 §8.8.3.2 entity-tag comparison', () => {
  const cases: [string, string, string | undefined, boolean, boolean][] = [
    ['same strong tag', '"a"', '"a"', true, true],
    ['weak in the list', 'W/"a"', '"a"', false, true],
    ['weak stored', '"a"', 'W/"a"', false, true],
    ['different tags', '"a", "b"', '"c"', false, false],
    ['second member matches', '"x", "b"', '"b"', true, true],
    ['comma inside a tag', '"a,b", "c"', '"a,b"', true, true],
    ['no stored tag', '"a"', undefined, false, false],
    ['whitespace around members', '  "x" ,   W/"a"  ', '"a"', false, true],
  ];
  for (const [name, list, etag, strong, weak] of cases) {
    test(name, () => {
      assert.equal(entityTagListMatches(list, etag, true), strong);
      assert.equal(entityTagListMatches(list, etag, false), weak);
    });
  }
  test('strong comparison of two tags', () => {
    assert.equal(strongEntityTagsMatch('"a"', '"a"'), true);
    assert.equal(strongEntityTagsMatch('W/"a"', '"a"'), false);
    assert.equal(strongEntityTagsMatch('"a"', undefined), false);
  });
});

describe('RFC 9111 §4.3.2 and RFC 9110 §13.2.2: preconditions answered from the cache', () => {
  const lastModified = httpDate(T0 - 3_600_000);
  const stored = entry({ etag: '"v1"', lastModified, headers: ['ETag', '"v1"', 'Date', httpDate(T0)] });
  const noValidators = entry({ headers: ['Date', httpDate(T0 - 60_000)] });
  const cases: [string, Record<string, string>, ConditionalOutcome, ReturnType<typeof entry>?][] = [
    ['no conditions', {}, 'proceed'],
    ['If-None-Match matches', { 'if-none-match': '"v1"' }, 'not_modified'],
    ['If-None-Match matches weakly', { 'if-none-match': 'W/"v1"' }, 'not_modified'],
    ['If-None-Match *', { 'if-none-match': '*' }, 'not_modified'],
    ['If-None-Match differs', { 'if-none-match': '"v0"' }, 'proceed'],
    ['If-None-Match differs: If-Modified-Since is not looked at', { 'if-none-match': '"v0"', 'if-modified-since': httpDate(T0) }, 'proceed'],
    ['If-Modified-Since after Last-Modified', { 'if-modified-since': httpDate(T0 - 60_000) }, 'not_modified'],
    ['If-Modified-Since equal to Last-Modified', { 'if-modified-since': lastModified }, 'not_modified'],
    ['If-Modified-Since before Last-Modified', { 'if-modified-since': httpDate(T0 - 7_200_000) }, 'proceed'],
    ['If-Modified-Since invalid', { 'if-modified-since': 'yesterday' }, 'proceed'],
    ['If-Modified-Since uses Date without Last-Modified (RFC 9111 §4.3.2)', { 'if-modified-since': httpDate(T0) }, 'not_modified', noValidators],
    ['If-Modified-Since before the stored Date', { 'if-modified-since': httpDate(T0 - 120_000) }, 'proceed', noValidators],
    ['If-Match is forwarded (not applicable to a cache)', { 'if-match': '"v1"' }, 'forward'],
    ['If-Match * is forwarded', { 'if-match': '*', 'if-none-match': '"v1"' }, 'forward'],
    ['If-Unmodified-Since is forwarded', { 'if-unmodified-since': httpDate(T0) }, 'forward'],
    ['preconditions ignored on a stored 404', { 'if-none-match': '*' }, 'proceed', entry({ status: 404, etag: '"v1"' })],
  ];
  for (const [name, request, outcome, target] of cases) {
    test(name, () => assert.equal(evaluateConditional(fields(request), target ?? stored), outcome));
  }
});

describe('RFC 9110 §15.4.5 fields of a 304', () => {
  test('the listed fields, with names and order as stored', () => {
    const stored = [
      'Content-Type', 'text/html', 'ETag', '"v1"', 'Cache-Control', 'max-age=60', 'Date', 'd', 'Vary', 'Accept',
      'Content-Length', '10', 'Expires', 'e', 'Content-Location', '/a', 'Last-Modified', 'lm', 'CDN-Cache-Control', 'max-age=5',
    ];
    assert.deepEqual(notModifiedFields(stored), [
      'ETag', '"v1"', 'Cache-Control', 'max-age=60', 'Date', 'd', 'Vary', 'Accept', 'Expires', 'e', 'Content-Location', '/a',
      'CDN-Cache-Control', 'max-age=5',
    ]);
  });
  test('Last-Modified is carried when there is no ETag', () => {
    assert.deepEqual(notModifiedFields(['Last-Modified', 'lm', 'Content-Type', 'x', 'date', 'd']), ['date', 'd', 'Last-Modified', 'lm']);
  });
});
