import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { contentRange, ifRangeAllowsPartial, parseRange, parseRangeHeader, type RangeResult } from '../../../src/cache/policy/range.js';
import { entry, fields, httpDate, T0 } from './fixtures.js';

describe('RFC 9110 §14.1.2 byte ranges', () => {
  const cases: [string | undefined, number, RangeResult][] = [
    [undefined, 100, { kind: 'none' }],
    ['bytes=0-9', 100, { kind: 'satisfiable', ranges: [{ start: 0, end: 9 }] }],
    ['Bytes = 0-9', 100, { kind: 'satisfiable', ranges: [{ start: 0, end: 9 }] }],
    ['bytes=90-', 100, { kind: 'satisfiable', ranges: [{ start: 90, end: 99 }] }],
    ['bytes=-10', 100, { kind: 'satisfiable', ranges: [{ start: 90, end: 99 }] }],
    ['bytes=-1000', 100, { kind: 'satisfiable', ranges: [{ start: 0, end: 99 }] }],
    ['bytes=50-1000', 100, { kind: 'satisfiable', ranges: [{ start: 50, end: 99 }] }],
    ['bytes=0-0, -1', 100, { kind: 'satisfiable', ranges: [{ start: 0, end: 0 }, { start: 99, end: 99 }] }],
    ['bytes=200-300, 0-1', 100, { kind: 'satisfiable', ranges: [{ start: 0, end: 1 }] }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=0-', 0, { kind: 'unsatisfiable' }],
    ['bytes=-5', 0, { kind: 'unsatisfiable' }],
    ['bytes=99999999999999999999-', 100, { kind: 'unsatisfiable' }],
    ['bytes=5-4', 100, { kind: 'none' }],
    ['bytes=a-b', 100, { kind: 'none' }],
    ['bytes=5', 100, { kind: 'none' }],
    ['bytes=', 100, { kind: 'none' }],
    ['items=0-9', 100, { kind: 'none' }],
    ['0-9', 100, { kind: 'none' }],
    [`bytes=${Array.from({ length: 101 }, (_, i) => `${i}-${i}`).join(',')}`, 1000, { kind: 'none' }],
  ];
  for (const [header, length, expected] of cases) {
    test(`${JSON.stringify(header)?.slice(0, 40)} of ${length}`, () => assert.deepEqual(parseRangeHeader(header, length), expected));
  }
  test('satisfiable ranges always lie within the body', () => {
    const position = fc.oneof(fc.nat(2000), fc.constant(''));
    const spec = fc.tuple(position, position).map(([a, b]) => `${a}-${b}`);
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 5 }), fc.nat(1500), (specs, length) => {
        const result = parseRangeHeader(`bytes=${specs.join(',')}`, length);
        if (result.kind !== 'satisfiable') return;
        assert.ok(result.ranges.length > 0);
        for (const range of result.ranges) {
          assert.ok(range.start >= 0 && range.start <= range.end && range.end < length, JSON.stringify({ specs, length, range }));
        }
      }),
    );
  });
  test('Content-Range values', () => {
    assert.equal(contentRange({ start: 0, end: 9 }, 100), 'bytes 0-9/100');
    assert.equal(contentRange(undefined, 100), 'bytes */100');
  });
});

describe('RFC 9110 §13.1.5 If-Range', () => {
  const lastModified = httpDate(T0 - 60_000);
  const stored = entry({ etag: '"v1"', lastModified, headers: ['Date', httpDate(T0)] });
  const cases: [string, string | undefined, boolean, ReturnType<typeof entry>?][] = [
    ['absent', undefined, true],
    ['matching strong ETag', '"v1"', true],
    ['different ETag', '"v2"', false],
    ['weak ETag never matches', 'W/"v1"', false],
    ['stored weak ETag never matches', '"v1"', false, entry({ etag: 'W/"v1"' })],
    ['exact Last-Modified', lastModified, true],
    ['other date', httpDate(T0 - 30_000), false],
    ['Last-Modified within a second of Date is weak', lastModified, false, entry({ lastModified, headers: ['Date', httpDate(T0 - 59_500)] })],
    ['Last-Modified without a stored Date is weak', lastModified, false, entry({ lastModified })],
    ['invalid date', 'soon', false],
  ];
  for (const [name, ifRange, allowed, target] of cases) {
    test(name, () => assert.equal(ifRangeAllowsPartial(ifRange, target ?? stored), allowed));
  }
});

describe('ranges answered from a stored response', () => {
  const stored = entry({ etag: '"v1"', body: Buffer.alloc(100) });
  const cases: [string, Record<string, string>, ReturnType<typeof parseRange>, ReturnType<typeof entry>?][] = [
    ['no Range', {}, { kind: 'none' }],
    ['a single range', { range: 'bytes=10-19' }, { kind: 'single', start: 10, end: 19 }],
    ['several ranges give the whole 200', { range: 'bytes=0-1,5-6' }, { kind: 'none' }],
    ['unsatisfiable', { range: 'bytes=500-' }, { kind: 'unsatisfiable' }],
    ['If-Range fails: the whole 200', { range: 'bytes=500-', 'if-range': '"v0"' }, { kind: 'none' }],
    ['If-Range matches', { range: 'bytes=-10', 'if-range': '"v1"' }, { kind: 'single', start: 90, end: 99 }],
    ['a stored 404 is never sliced', { range: 'bytes=0-1' }, { kind: 'none' }, entry({ status: 404, body: Buffer.alloc(100) })],
  ];
  for (const [name, request, expected, target] of cases) {
    test(name, () => assert.deepEqual(parseRange(fields(request), target ?? stored), expected));
  }
});
