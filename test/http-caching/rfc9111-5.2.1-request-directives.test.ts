// RFC 9111 §5.2.1 (and §5.4 Pragma) through a real svc node: what a client's Cache-Control asks of
// the stored response, and when svc must go to the origin or answer 504 instead.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import type { OriginReply } from '../support/test-origin.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';

interface DirectiveCase {
  name: string;
  /** The origin's Cache-Control for the stored response. */
  responseCacheControl: string;
  /** Time between storing and the request under test. */
  ageMs: number;
  requestHeaders: Record<string, string>;
  status: number;
  xCache: string;
  /** Origin requests made by the request under test. */
  originRequests: number;
}

const cases: DirectiveCase[] = [
  { name: 'max-age younger than the entry: revalidated at the origin', responseCacheControl: 'max-age=600', ageMs: 30_000, requestHeaders: { 'cache-control': 'max-age=10' }, status: 200, xCache: 'REVALIDATED', originRequests: 1 },
  { name: 'max-age older than the entry: served from cache', responseCacheControl: 'max-age=600', ageMs: 30_000, requestHeaders: { 'cache-control': 'max-age=60' }, status: 200, xCache: 'HIT', originRequests: 0 },
  { name: 'max-stale covering the staleness: served stale', responseCacheControl: 'max-age=10', ageMs: 20_000, requestHeaders: { 'cache-control': 'max-stale=30' }, status: 200, xCache: 'STALE', originRequests: 0 },
  { name: 'max-stale without a value accepts any staleness', responseCacheControl: 'max-age=10', ageMs: 3_600_000, requestHeaders: { 'cache-control': 'max-stale' }, status: 200, xCache: 'STALE', originRequests: 0 },
  { name: 'max-stale shorter than the staleness: revalidated', responseCacheControl: 'max-age=10', ageMs: 20_000, requestHeaders: { 'cache-control': 'max-stale=5' }, status: 200, xCache: 'REVALIDATED', originRequests: 1 },
  { name: 'max-stale never overrides must-revalidate', responseCacheControl: 'max-age=10, must-revalidate', ageMs: 20_000, requestHeaders: { 'cache-control': 'max-stale=300' }, status: 200, xCache: 'REVALIDATED', originRequests: 1 },
  { name: 'min-fresh the entry cannot meet: revalidated', responseCacheControl: 'max-age=60', ageMs: 30_000, requestHeaders: { 'cache-control': 'min-fresh=40' }, status: 200, xCache: 'REVALIDATED', originRequests: 1 },
  { name: 'min-fresh the entry meets: served from cache', responseCacheControl: 'max-age=60', ageMs: 30_000, requestHeaders: { 'cache-control': 'min-fresh=20' }, status: 200, xCache: 'HIT', originRequests: 0 },
  { name: 'no-cache: a fresh entry is validated first', responseCacheControl: 'max-age=600', ageMs: 0, requestHeaders: { 'cache-control': 'no-cache' }, status: 200, xCache: 'REVALIDATED', originRequests: 1 },
  { name: 'Pragma: no-cache without Cache-Control acts as no-cache (§5.4)', responseCacheControl: 'max-age=600', ageMs: 0, requestHeaders: { pragma: 'no-cache' }, status: 200, xCache: 'REVALIDATED', originRequests: 1 },
  { name: 'Pragma is ignored when Cache-Control is present (§5.4)', responseCacheControl: 'max-age=600', ageMs: 0, requestHeaders: { pragma: 'no-cache', 'cache-control': 'max-stale=1' }, status: 200, xCache: 'HIT', originRequests: 0 },
  { name: 'only-if-cached with a fresh entry: served', responseCacheControl: 'max-age=600', ageMs: 0, requestHeaders: { 'cache-control': 'only-if-cached' }, status: 200, xCache: 'HIT', originRequests: 0 },
  { name: 'only-if-cached with a stale entry: 504, no origin traffic', responseCacheControl: 'max-age=10', ageMs: 20_000, requestHeaders: { 'cache-control': 'only-if-cached' }, status: 504, xCache: '', originRequests: 0 },
  { name: 'only-if-cached with max-stale: the stale entry is served', responseCacheControl: 'max-age=10', ageMs: 20_000, requestHeaders: { 'cache-control': 'only-if-cached, max-stale=60' }, status: 200, xCache: 'STALE', originRequests: 0 },
];

describe('RFC 9111 §5.2.1 request directives through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  cases.forEach((c, i) => {
    test(c.name, async () => {
      const path = `/request-directive/${i}`;
      f.on(path, (request) =>
        request.headers['if-none-match'] === '"v1"'
          ? { status: 304, headers: { etag: '"v1"', 'cache-control': c.responseCacheControl } }
          : { headers: { etag: '"v1"', 'cache-control': c.responseCacheControl }, body: 'stored body' },
      );
      assert.equal(header(await f.get(path), 'x-cache'), 'MISS');
      f.svc.clock.advance(c.ageMs);
      const before = f.originRequests(path).length;
      const answer = await f.get(path, { headers: c.requestHeaders });
      assert.equal(answer.status, c.status);
      if (c.status === 200) {
        assert.equal(header(answer, 'x-cache'), c.xCache);
        assert.equal(answer.body, 'stored body');
      }
      assert.equal(f.originRequests(path).length - before, c.originRequests);
    });
  });

  test('only-if-cached on a miss: 504 without asking the origin (§5.2.1.7)', async () => {
    f.on('/request-directive/only-if-cached-miss', { headers: { 'cache-control': 'max-age=600' }, body: 'never' });
    const answer = await f.get('/request-directive/only-if-cached-miss', { headers: { 'cache-control': 'only-if-cached' } });
    assert.equal(answer.status, 504);
    assert.equal(f.originRequests('/request-directive/only-if-cached-miss').length, 0);
  });

  test('no-store: the response is relayed and not stored (§5.2.1.5)', async () => {
    f.on('/request-directive/no-store', { headers: { 'cache-control': 'max-age=600' }, body: 'not kept' });
    const first = await f.get('/request-directive/no-store', { headers: { 'cache-control': 'no-store' } });
    assert.equal(first.body, 'not kept');
    assert.equal(header(first, 'x-cache'), 'BYPASS');
    const second = await f.get('/request-directive/no-store');
    assert.equal(header(second, 'x-cache'), 'MISS');
    assert.equal(f.originRequests('/request-directive/no-store').length, 2);
  });

  test('no-cache revalidation sends the stored validators to the origin', async () => {
    f.on('/request-directive/validators', (request): OriginReply =>
      request.headers['if-none-match'] === '"v7"'
        ? { status: 304, headers: { etag: '"v7"', 'cache-control': 'max-age=600' } }
        : { headers: { etag: '"v7"', 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT', 'cache-control': 'max-age=600' }, body: 'validated' },
    );
    await f.get('/request-directive/validators');
    const answer = await f.get('/request-directive/validators', { headers: { 'cache-control': 'no-cache' } });
    assert.equal(header(answer, 'x-cache'), 'REVALIDATED');
    const conditional = f.originRequests('/request-directive/validators')[1]!;
    assert.equal(conditional.headers['if-none-match'], '"v7"');
    assert.equal(conditional.headers['if-modified-since'], 'Mon, 01 Jan 2024 00:00:00 GMT');
  });
});
