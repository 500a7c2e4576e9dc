// RFC 9111 §5.2.1 (and §5.4 Pragma) through a real svc node: what a client's Cache-Control asks of
// the stored response, and when svc must go to the origin or answer 504 instead.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { exchange } from './exchanges.js';
import { R, requirement, type Requirement } from './rfc-requirements.js';

interface DirectiveCase {
  name: string;
  /** The requirement the case proves, when it proves one. */
  requirement?: Requirement;
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
  { name: 'only-if-cached with a fresh entry: served', requirement: R.onlyIfCached, responseCacheControl: 'max-age=600', ageMs: 0, requestHeaders: { 'cache-control': 'only-if-cached' }, status: 200, xCache: 'HIT', originRequests: 0 },
  { name: 'only-if-cached with a stale entry: 504 (MISS), no origin traffic', requirement: R.onlyIfCached, responseCacheControl: 'max-age=10', ageMs: 20_000, requestHeaders: { 'cache-control': 'only-if-cached' }, status: 504, xCache: 'MISS', originRequests: 0 },
  { name: 'only-if-cached with max-stale: the stale entry is served', requirement: R.onlyIfCached, responseCacheControl: 'max-age=10', ageMs: 20_000, requestHeaders: { 'cache-control': 'only-if-cached, max-stale=60' }, status: 200, xCache: 'STALE', originRequests: 0 },
];

describe('RFC 9111 §5.2.1 request directives through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  cases.forEach((c, i) => {
    const run = async (): Promise<void> => {
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
      assert.equal(header(answer, 'x-cache'), c.xCache);
      if (c.status === 200) assert.equal(answer.body, 'stored body');
      assert.equal(f.originRequests(path).length - before, c.originRequests);
    };
    if (c.requirement) requirement(c.requirement, run, c.name);
    else test(`svc: ${c.name}`, run);
  });

  requirement(
    R.onlyIfCached,
    async () => {
      await exchange(f, '/request-directive/only-if-cached-miss', { headers: { 'cache-control': 'max-age=600' }, body: 'never' }, [
        { headers: { 'cache-control': 'only-if-cached' }, status: 504, xCache: 'MISS', originRequests: 0 },
      ]);
    },
    'nothing stored: 504 (MISS) without asking the origin',
  );

  test('svc: a request no-cache is a preference: when the origin then fails, the fresh stored response answers (STALE)', async () => {
    await exchange(
      f,
      '/request-directive/no-cache-failing',
      (_request, count) => (count === 0 ? { headers: { 'cache-control': 'max-age=600' }, body: 'stored body' } : { status: 503, body: 'down' }),
      [
        { xCache: 'MISS' },
        { headers: { 'cache-control': 'no-cache' }, status: 200, xCache: 'STALE', answerBody: 'stored body', originRequests: 2 },
      ],
    );
  });

  requirement(R.requestNoStore, async () => {
    await exchange(f, '/request-directive/no-store', { headers: { 'cache-control': 'max-age=600' }, body: 'not kept' }, [
      { headers: { 'cache-control': 'no-store' }, answerBody: 'not kept', xCache: 'BYPASS' },
      { xCache: 'MISS', originRequests: 2 },
      // A stored response still answers a no-store request; the directive does not apply to it.
      { headers: { 'cache-control': 'no-store' }, xCache: 'HIT', originRequests: 2 },
    ]);
  });
});
