import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mergeNotModified, selectNotModifiedTargets, type UpdateCandidate } from '../../../src/cache/policy/not-modified.js';
import { fields, httpDate, T0 } from './fixtures.js';

describe('RFC 9111 §3.2 updating stored header fields', () => {
  const stored = ['Content-Type', 'text/html', 'Content-Length', '10', 'Cache-Control', 'max-age=10', 'X-A', '1', 'x-a', '2', 'ETag', '"v1"', 'Content-Encoding', 'gzip'];
  test('fields in the 304 replace all stored lines of that name; others keep their place', () => {
    const merged = mergeNotModified(stored, ['cache-control', 'max-age=60', 'X-A', '3', 'Date', 'd']);
    assert.deepEqual(merged, [
      'Content-Type', 'text/html', 'Content-Length', '10', 'ETag', '"v1"', 'Content-Encoding', 'gzip',
      'cache-control', 'max-age=60', 'X-A', '3', 'Date', 'd',
    ]);
  });
  test('framing fields of the stored body are never replaced', () => {
    const merged = mergeNotModified(stored, ['Content-Length', '0', 'Content-Encoding', 'br', 'Transfer-Encoding', 'chunked', 'Content-Range', 'bytes 0-1/2']);
    assert.deepEqual(merged, stored);
  });
  test('hop-by-hop fields and those the Connection header lists are not taken', () => {
    const merged = mergeNotModified(['A', '1'], ['Connection', 'close, X-Hop', 'Keep-Alive', 't=5', 'X-Hop', 'h', 'X-Kept', 'k']);
    assert.deepEqual(merged, ['A', '1', 'X-Kept', 'k']);
  });
  test('fields kept out of storage by private="…" / no-cache="…" stay out', () => {
    assert.deepEqual(mergeNotModified(['A', '1'], ['Set-Cookie', 's', 'B', '2'], ['set-cookie']), ['A', '1', 'B', '2']);
  });
  test('the inputs are not modified', () => {
    const copy = stored.slice();
    mergeNotModified(stored, ['X-A', '9']);
    assert.deepEqual(stored, copy);
  });
});

describe('RFC 9111 §4.3.4 selecting the stored responses a 304 updates', () => {
  const lm = httpDate(T0 - 3_600_000);
  const stored: UpdateCandidate[] = [
    { etag: '"a"', lastModified: lm },
    { etag: 'W/"w"', lastModified: undefined },
    { etag: '"a"', lastModified: undefined },
    { etag: 'W/"w"', lastModified: lm },
  ];
  const cases: [string, Record<string, string>, UpdateCandidate[], number[]][] = [
    ['a strong ETag selects every match', { etag: '"a"' }, stored, [0, 2]],
    ['a weak ETag selects the most recent match', { etag: 'W/"w"' }, stored, [1]],
    ['an unknown ETag selects nothing', { etag: '"z"' }, stored, []],
    ['a strong Last-Modified selects every match', { 'last-modified': lm, date: httpDate(T0) }, stored, [0, 3]],
    ['a weak Last-Modified selects the most recent match', { 'last-modified': lm, date: lm }, stored, [0]],
    ['no validators: the only stored response without validators', {}, [{ etag: undefined, lastModified: undefined }], [0]],
    ['no validators: the only stored response, whose validators the request carried', {}, [{ etag: '"a"', lastModified: lm }], [0]],
    ['no validators: nothing when several are stored', {}, [{ etag: undefined, lastModified: undefined }, { etag: undefined, lastModified: undefined }], []],
  ];
  for (const [name, headers, candidates, expected] of cases) {
    test(name, () => assert.deepEqual(selectNotModifiedTargets(fields(headers), candidates), expected));
  }
});
