// RFC 9111 §4.3 and §3.2 through a real svc node: revalidating a stale entry with its validators and
// combining the origin's 304 with it, and answering a client's own conditional request from the
// cache (RFC 9110 §13) without origin traffic.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import type { OriginReply } from '../support/test-origin.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';

const LAST_MODIFIED = 'Mon, 01 Jan 2024 00:00:00 GMT';

describe('RFC 9111 §4.3.4 combining a 304 through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  test('a 304 updates the stored headers and freshness, reuses the body, and is served REVALIDATED', async () => {
    f.on('/combine/etag', (request): OriginReply =>
      request.headers['if-none-match'] === '"v1"'
        ? { status: 304, headers: { etag: '"v1"', 'cache-control': 'max-age=100', 'x-version': '2' } }
        : { headers: { etag: '"v1"', 'cache-control': 'max-age=10', 'x-version': '1', 'content-type': 'text/plain' }, body: 'original body' },
    );
    await f.get('/combine/etag');
    f.svc.clock.advance(20_000);
    const revalidated = await f.get('/combine/etag');
    assert.equal(header(revalidated, 'x-cache'), 'REVALIDATED');
    assert.equal(revalidated.body, 'original body');
    assert.equal(header(revalidated, 'x-version'), '2');
    assert.equal(header(revalidated, 'cache-control'), 'max-age=100');
    assert.equal(header(revalidated, 'content-type'), 'text/plain');
    assert.equal(header(revalidated, 'content-length'), '13');
    assert.equal(f.originRequests('/combine/etag')[1]?.headers['if-none-match'], '"v1"');
    // The new lifetime (100 s) counts from the 304.
    f.svc.clock.advance(50_000);
    const hit = await f.get('/combine/etag');
    assert.equal(header(hit, 'x-cache'), 'HIT');
    assert.equal(header(hit, 'x-version'), '2');
    assert.equal(hit.body, 'original body');
    assert.equal(f.originRequests('/combine/etag').length, 2);
  });

  test('with only Last-Modified, If-Modified-Since is sent and the 304 combined', async () => {
    f.on('/combine/date', (request) =>
      request.headers['if-modified-since'] === LAST_MODIFIED
        ? { status: 304, headers: { 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=100' } }
        : { headers: { 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=10' }, body: 'dated body' },
    );
    await f.get('/combine/date');
    f.svc.clock.advance(20_000);
    const revalidated = await f.get('/combine/date');
    assert.equal(header(revalidated, 'x-cache'), 'REVALIDATED');
    assert.equal(revalidated.body, 'dated body');
    assert.equal(f.originRequests('/combine/date')[1]?.headers['if-modified-since'], LAST_MODIFIED);
  });

  test('a 304 whose validator selects nothing stored makes svc ask again without conditions', async () => {
    f.on('/combine/mismatch', (request, count) => {
      if (request.headers['if-none-match'] !== undefined) return { status: 304, headers: { etag: '"other"', 'cache-control': 'max-age=100' } };
      return { headers: { etag: count === 0 ? '"old"' : '"new"', 'cache-control': 'max-age=10' }, body: count === 0 ? 'old body' : 'new body' };
    });
    await f.get('/combine/mismatch');
    f.svc.clock.advance(20_000);
    const answer = await f.get('/combine/mismatch');
    assert.equal(answer.body, 'new body');
    assert.equal(header(answer, 'x-cache'), 'MISS');
    const requests = f.originRequests('/combine/mismatch');
    assert.equal(requests.length, 3);
    assert.equal(requests[2]?.headers['if-none-match'], undefined);
  });

  test('a 304 that says no-store is served once and the entry dropped', async () => {
    f.on('/combine/no-store', (request) =>
      request.headers['if-none-match'] === '"ns"'
        ? { status: 304, headers: { etag: '"ns"', 'cache-control': 'no-store' } }
        : { headers: { etag: '"ns"', 'cache-control': 'max-age=10' }, body: 'kept once' },
    );
    await f.get('/combine/no-store');
    f.svc.clock.advance(20_000);
    const revalidated = await f.get('/combine/no-store');
    assert.equal(revalidated.body, 'kept once');
    assert.equal(header(revalidated, 'x-cache'), 'REVALIDATED');
    const after = await f.get('/combine/no-store');
    assert.notEqual(header(after, 'x-cache'), 'HIT');
    assert.equal(f.originRequests('/combine/no-store').length, 3);
  });
});

interface ConditionalCase {
  name: string;
  requestHeaders: Record<string, string>;
  status: number;
}

const conditionalCases: ConditionalCase[] = [
  { name: 'If-None-Match with the stored ETag: 304', requestHeaders: { 'if-none-match': '"c1"' }, status: 304 },
  { name: 'If-None-Match with a weak form of the stored ETag: 304 (weak comparison)', requestHeaders: { 'if-none-match': 'W/"c1"' }, status: 304 },
  { name: 'If-None-Match listing the stored ETag among others: 304', requestHeaders: { 'if-none-match': '"x", "c1"' }, status: 304 },
  { name: 'If-None-Match: *: 304', requestHeaders: { 'if-none-match': '*' }, status: 304 },
  { name: 'If-None-Match with another ETag: 200', requestHeaders: { 'if-none-match': '"other"' }, status: 200 },
  { name: 'If-Modified-Since at Last-Modified: 304', requestHeaders: { 'if-modified-since': LAST_MODIFIED }, status: 304 },
  { name: 'If-Modified-Since after Last-Modified: 304', requestHeaders: { 'if-modified-since': 'Tue, 02 Jan 2024 00:00:00 GMT' }, status: 304 },
  { name: 'If-Modified-Since before Last-Modified: 200', requestHeaders: { 'if-modified-since': 'Sun, 31 Dec 2023 00:00:00 GMT' }, status: 200 },
  {
    name: 'If-None-Match wins over If-Modified-Since',
    requestHeaders: { 'if-none-match': '"other"', 'if-modified-since': 'Tue, 02 Jan 2024 00:00:00 GMT' },
    status: 200,
  },
  { name: 'an invalid If-Modified-Since is ignored: 200', requestHeaders: { 'if-modified-since': 'yesterday' }, status: 200 },
];

describe('client conditional requests answered by svc (RFC 9111 §4.3.2)', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
    f.on('/conditional', {
      headers: { etag: '"c1"', 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=600', 'content-type': 'text/plain', 'x-extra': 'e' },
      body: 'conditional body',
    });
    await f.get('/conditional');
  });
  after(() => f.close());

  for (const c of conditionalCases) {
    test(c.name, async () => {
      const answer = await f.get('/conditional', { headers: c.requestHeaders });
      assert.equal(answer.status, c.status);
      assert.equal(header(answer, 'x-cache'), 'HIT');
      assert.equal(answer.body, c.status === 304 ? '' : 'conditional body');
      if (c.status === 304) {
        assert.equal(header(answer, 'etag'), '"c1"');
        assert.equal(header(answer, 'cache-control'), 'max-age=600');
        assert.equal(header(answer, 'x-extra'), undefined, 'a 304 carries only the fields RFC 9110 §15.4.5 lists');
      }
      assert.equal(f.originRequests('/conditional').length, 1, 'no origin traffic');
    });
  }

  test('If-Match is not evaluated by svc: the request goes to the origin (§4.3.2)', async () => {
    const before = f.originRequests('/conditional').length;
    const answer = await f.get('/conditional', { headers: { 'if-match': '"c1"' } });
    assert.equal(answer.status, 200);
    assert.equal(f.originRequests('/conditional').length, before + 1);
    assert.equal(f.originRequests('/conditional').at(-1)?.headers['if-match'], '"c1"');
  });
});
