// RFC 9110 §14 through a real svc node: Range requests answered from a stored full 200 (206, 416,
// If-Range), and a Range on a miss filling the cache with the whole representation.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { R, requirement, type Requirement } from './rfc-requirements.js';

const BODY = '0123456789abcdefghij';
const LAST_MODIFIED = 'Mon, 01 Jan 2024 00:00:00 GMT';

interface RangeCase {
  name: string;
  requirement?: Requirement;
  requestHeaders: Record<string, string>;
  status: number;
  body: string;
  contentRange?: string;
}

const cases: RangeCase[] = [
  { name: 'a first-last range: 206 with that slice', requirement: R.rangeSatisfiable206, requestHeaders: { range: 'bytes=2-5' }, status: 206, body: '2345', contentRange: 'bytes 2-5/20' },
  { name: 'an open range: 206 to the end', requirement: R.singlePartContentRange, requestHeaders: { range: 'bytes=15-' }, status: 206, body: 'fghij', contentRange: 'bytes 15-19/20' },
  { name: 'a suffix range: the last bytes', requestHeaders: { range: 'bytes=-3' }, status: 206, body: 'hij', contentRange: 'bytes 17-19/20' },
  { name: 'a range past the end is clipped', requestHeaders: { range: 'bytes=18-100' }, status: 206, body: 'ij', contentRange: 'bytes 18-19/20' },
  { name: 'an unsatisfiable range: 416 with bytes */length', requirement: R.rangeUnsatisfiable416, requestHeaders: { range: 'bytes=20-30' }, status: 416, body: '', contentRange: 'bytes */20' },
  { name: 'several ranges: the whole 200 (no multipart)', requestHeaders: { range: 'bytes=0-1,4-5' }, status: 200, body: BODY },
  { name: 'another unit: the whole 200', requestHeaders: { range: 'items=0-1' }, status: 200, body: BODY },
  { name: 'invalid syntax (last < first): the whole 200', requestHeaders: { range: 'bytes=5-2' }, status: 200, body: BODY },
  { name: 'a position of 30 digits is beyond the body, not an overflow: 416', requirement: R.largeRangeNumbers, requestHeaders: { range: 'bytes=999999999999999999999999999999-' }, status: 416, body: '', contentRange: 'bytes */20' },
  { name: 'a suffix of 30 digits is the whole body: 206', requirement: R.largeRangeNumbers, requestHeaders: { range: 'bytes=-999999999999999999999999999999' }, status: 206, body: BODY, contentRange: 'bytes 0-19/20' },
  { name: 'If-Range with the stored strong ETag: 206', requestHeaders: { range: 'bytes=0-3', 'if-range': '"r1"' }, status: 206, body: '0123', contentRange: 'bytes 0-3/20' },
  { name: 'If-Range with another ETag: the whole 200', requirement: R.ifRangeFalseIgnoresRange, requestHeaders: { range: 'bytes=0-3', 'if-range': '"r0"' }, status: 200, body: BODY },
  { name: 'If-Range with a weak ETag never matches: the whole 200', requirement: R.ifRangeFalseIgnoresRange, requestHeaders: { range: 'bytes=0-3', 'if-range': 'W/"r1"' }, status: 200, body: BODY },
  { name: 'If-Range with the stored Last-Modified: 206', requestHeaders: { range: 'bytes=0-3', 'if-range': LAST_MODIFIED }, status: 206, body: '0123', contentRange: 'bytes 0-3/20' },
  { name: 'If-Range with another date: the whole 200', requirement: R.ifRangeFalseIgnoresRange, requestHeaders: { range: 'bytes=0-3', 'if-range': 'Tue, 02 Jan 2024 00:00:00 GMT' }, status: 200, body: BODY },
];

describe('RFC 9110 §14 ranges from the cache through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
    f.on('/range', {
      headers: {
        etag: '"r1"',
        'last-modified': LAST_MODIFIED,
        'cache-control': 'max-age=600',
        expires: 'Thu, 01 Jan 2099 00:00:00 GMT',
        'content-location': '/range.txt',
        vary: 'Accept-Encoding',
        'accept-ranges': 'bytes',
      },
      body: BODY,
    });
    await f.get('/range');
  });
  after(() => f.close());

  for (const c of cases) {
    const run = async (): Promise<void> => {
      const answer = await f.get('/range', { headers: c.requestHeaders });
      assert.equal(answer.status, c.status);
      assert.equal(answer.body, c.body);
      assert.equal(header(answer, 'content-range'), c.contentRange);
      assert.equal(header(answer, 'content-length'), String(Buffer.byteLength(c.body)));
      assert.equal(header(answer, 'x-cache'), 'HIT');
      assert.equal(f.originRequests('/range').length, 1, 'answered without the origin');
    };
    if (c.requirement) requirement(c.requirement, run, c.name);
    else test(`svc: ${c.name}`, run);
  }

  requirement(R.unsatisfiableContentRange, async () => {
    const answer = await f.get('/range', { headers: { range: 'bytes=100-' } });
    assert.equal(answer.status, 416);
    assert.equal(header(answer, 'content-range'), 'bytes */20');
  });

  requirement(R.partialContentFields, async () => {
    const whole = await f.get('/range');
    const part = await f.get('/range', { headers: { range: 'bytes=0-3' } });
    assert.equal(part.status, 206);
    for (const name of ['date', 'cache-control', 'etag', 'expires', 'content-location', 'vary', 'last-modified']) {
      assert.ok(header(whole, name) !== undefined, `the 200 has ${name}`);
      assert.equal(header(part, name), header(whole, name), name);
    }
  });

  requirement(R.rangeOnlyForGet, async () => {
    const answer = await f.get('/range', { method: 'HEAD', headers: { range: 'bytes=0-3' } });
    assert.equal(answer.status, 200);
    assert.equal(header(answer, 'content-length'), '20');
    assert.equal(header(answer, 'content-range'), undefined);
  });

  test('svc: a Range on a miss: the origin is asked for the whole body, which is stored', async () => {
    f.on('/range/miss', { headers: { 'cache-control': 'max-age=600' }, body: BODY });
    const first = await f.get('/range/miss', { headers: { range: 'bytes=0-3' } });
    assert.equal(f.originRequests('/range/miss')[0]?.headers.range, undefined);
    // Either answer is right (§14.2 lets a server ignore Range); the body must match the status.
    assert.equal(first.body, first.status === 206 ? '0123' : BODY);
    const second = await f.get('/range/miss', { headers: { range: 'bytes=4-7' } });
    assert.equal(second.status, 206);
    assert.equal(second.body, '4567');
    assert.equal(header(second, 'x-cache'), 'HIT');
  });
});
