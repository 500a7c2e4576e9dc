// X-Cache and the cache_result label through a real svc node, for every case in the table of
// docs/http-caching.md ("X-Cache and cache_result"): what the client is told in the head, and what
// svc_requests_total counts once the answer has ended.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header, type Answer, type RequestFields } from '../support/http.js';
import { freePort } from '../../bench/support/free-port.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { eventually } from '../support/eventually.js';

const MAX_OBJECT_BYTES = 4096;

type Counts = Record<string, number>;

/** svc_requests_total summed by cache_result. */
function countsByResult(metrics: string): Counts {
  const counts: Counts = {};
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('svc_requests_total{')) continue;
    const result = /cache_result="([A-Z]+)"/.exec(line)?.[1];
    if (result !== undefined) counts[result] = (counts[result] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return counts;
}

function difference(after: Counts, before: Counts): Counts {
  const counted: Counts = {};
  for (const [result, value] of Object.entries(after)) {
    const delta = value - (before[result] ?? 0);
    if (delta > 0) counted[result] = delta;
  }
  return counted;
}

describe('X-Cache and cache_result through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    const deadPort = await freePort();
    f = await startCachingFixture({
      config: { max_object_bytes: MAX_OBJECT_BYTES, stale_if_unreachable: 0 },
      // Nothing listens on the dead pool's port: its connections are refused.
      extraPools: [{ name: 'dead', upstreams: [`http://127.0.0.1:${deadPort}`], connect_timeout: '1s', response_timeout: '2s' }],
      extraRoutes: [
        { name: 'dead', match: { path_prefix: '/dead' }, pool: 'dead' },
        { name: 'uncached', match: { path_prefix: '/uncached' }, pool: 'origin', cache: { enabled: false } },
      ],
    });
  });
  after(() => f.close());

  /**
   * Sends the requests one after the other and checks the X-Cache of each answer, then what the
   * metric counted for them (polled: it is counted when each answer has ended).
   */
  async function expectResults(path: string, requests: { method?: string; headers?: RequestFields; body?: string }[], xCache: (string | undefined)[], counted: Counts): Promise<Answer[]> {
    const before = countsByResult(await f.metrics());
    const answers: Answer[] = [];
    for (const request of requests) answers.push(await f.get(path, request));
    assert.deepEqual(answers.map((answer) => header(answer, 'x-cache')), xCache, 'X-Cache');
    const total = Object.values(counted).reduce((sum, value) => sum + value, 0);
    const seen = await eventually(
      'the requests to be counted',
      async () => difference(countsByResult(await f.metrics()), before),
      (counts) => Object.values(counts).reduce((sum, value) => sum + value, 0) >= total,
    );
    assert.deepEqual(seen, counted, 'cache_result');
    return answers;
  }

  test('stored: MISS, then HIT', async () => {
    f.on('/stored', { headers: { 'cache-control': 'max-age=600' }, body: 'stored' });
    await expectResults('/stored', [{}, {}], ['MISS', 'HIT'], { MISS: 1, HIT: 1 });
  });

  test('the response forbids storing (no-store): BYPASS', async () => {
    f.on('/no-store', { headers: { 'cache-control': 'no-store' }, body: 'not kept' });
    await expectResults('/no-store', [{}, {}], ['BYPASS', 'BYPASS'], { BYPASS: 2 });
  });

  test('nothing says it may be stored (no freshness, no validator): BYPASS', async () => {
    f.on('/dynamic', { headers: { 'content-type': 'text/html' }, body: 'dynamic' });
    await expectResults('/dynamic', [{}], ['BYPASS'], { BYPASS: 1 });
  });

  test('the request forbids storing (no-store): BYPASS', async () => {
    f.on('/request-no-store', { headers: { 'cache-control': 'max-age=600' }, body: 'asked not to keep' });
    await expectResults('/request-no-store', [{ headers: { 'cache-control': 'no-store' } }], ['BYPASS'], { BYPASS: 1 });
  });

  test('a Content-Length over max_object_bytes: BYPASS', async () => {
    f.on('/large', { headers: { 'cache-control': 'max-age=600' }, body: 'x'.repeat(MAX_OBJECT_BYTES + 1) });
    await expectResults('/large', [{}, {}], ['BYPASS', 'BYPASS'], { BYPASS: 2 });
  });

  test('a body without Content-Length that grows over max_object_bytes: MISS in the head, BYPASS counted', async () => {
    f.on('/large-chunked', { headers: { 'cache-control': 'max-age=600', 'transfer-encoding': 'chunked' }, body: 'x'.repeat(MAX_OBJECT_BYTES + 1) });
    await expectResults('/large-chunked', [{}, {}], ['MISS', 'MISS'], { BYPASS: 2 });
    assert.equal(f.originRequests('/large-chunked').length, 2);
  });

  test('a body without Content-Length within max_object_bytes: MISS, then HIT', async () => {
    f.on('/small-chunked', { headers: { 'cache-control': 'max-age=600', 'transfer-encoding': 'chunked' }, body: 'small' });
    await expectResults('/small-chunked', [{}, {}], ['MISS', 'HIT'], { MISS: 1, HIT: 1 });
  });

  test('the 65th variant of a key: BYPASS', async () => {
    f.on('/variants', (request) => ({ headers: { 'cache-control': 'max-age=600', vary: 'X-Variant' }, body: String(request.headers['x-variant']) }));
    for (let i = 0; i < 64; i++) await f.get('/variants', { headers: { 'x-variant': `v${i}` } });
    await expectResults('/variants', [{ headers: { 'x-variant': 'v64' } }, { headers: { 'x-variant': 'v0' } }], ['BYPASS', 'HIT'], { BYPASS: 1, HIT: 1 });
  });

  test('an origin 5xx that is not stored: MISS (a fill that failed)', async () => {
    f.on('/error', { status: 503, body: 'down' });
    const answers = await expectResults('/error', [{}, {}], ['MISS', 'MISS'], { MISS: 2 });
    assert.deepEqual(answers.map((answer) => answer.status), [503, 503]);
  });

  test('an origin 5xx with explicit freshness: stored, MISS then HIT', async () => {
    f.on('/error-stored', { status: 500, headers: { 'cache-control': 'max-age=60' }, body: 'cached error' });
    await expectResults('/error-stored', [{}, {}], ['MISS', 'HIT'], { MISS: 1, HIT: 1 });
  });

  test('an origin that refuses the connection: 502, MISS', async () => {
    const answers = await expectResults('/dead/page', [{}], ['MISS'], { MISS: 1 });
    assert.equal(answers[0]!.status, 502);
  });

  test('a 4xx without freshness: BYPASS; a 404 with a Last-Modified: stored', async () => {
    f.on('/forbidden', { status: 403, body: 'no' });
    await expectResults('/forbidden', [{}], ['BYPASS'], { BYPASS: 1 });
    f.on('/missing', { status: 404, headers: { 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT' }, body: 'missing' });
    await expectResults('/missing', [{}, {}], ['MISS', 'HIT'], { MISS: 1, HIT: 1 });
  });

  test("the origin's body fails mid-way: the client's connection is cut, MISS counted", async () => {
    f.on('/cut', { headers: { 'cache-control': 'max-age=600' }, body: '0123456789', cutAfterBytes: 4 });
    const before = countsByResult(await f.metrics());
    await assert.rejects(f.get('/cut'));
    await eventually('the request to be counted', async () => difference(countsByResult(await f.metrics()), before), (counts) => Object.keys(counts).length > 0);
    assert.deepEqual(difference(countsByResult(await f.metrics()), before), { MISS: 1 });
  });

  test('only-if-cached with nothing usable stored: 504, MISS', async () => {
    f.on('/only-if-cached', { headers: { 'cache-control': 'max-age=600' }, body: 'never fetched' });
    const answers = await expectResults('/only-if-cached', [{ headers: { 'cache-control': 'only-if-cached' } }], ['MISS'], { MISS: 1 });
    assert.equal(answers[0]!.status, 504);
  });

  test('stale within stale-while-revalidate: STALE; validated by a 304: REVALIDATED', async () => {
    f.on('/stale', (request) =>
      request.headers['if-none-match'] === '"s"'
        ? { status: 304, headers: { etag: '"s"', 'cache-control': 'max-age=10' } }
        : { headers: { etag: '"s"', 'cache-control': 'max-age=10, stale-while-revalidate=30' }, body: 'stale' },
    );
    await f.get('/stale');
    f.svc.clock.advance(20_000);
    await expectResults('/stale', [{}], ['STALE'], { STALE: 1 });
    await eventually('the background revalidation', () => f.originRequests('/stale').length, (asked) => asked === 2);
    f.svc.clock.advance(20_000);
    await expectResults('/stale', [{}], ['REVALIDATED'], { REVALIDATED: 1 });
  });

  test('requests the cache does not handle: BYPASS (a route with caching off, POST, If-Match)', async () => {
    f.on('/uncached/page', { headers: { 'cache-control': 'max-age=600' }, body: 'uncached' });
    await expectResults('/uncached/page', [{}, {}], ['BYPASS', 'BYPASS'], { BYPASS: 2 });
    f.on('/unsafe', { status: 201, body: 'created' });
    await expectResults('/unsafe', [{ method: 'POST', body: '{}' }], ['BYPASS'], { BYPASS: 1 });
    f.on('/if-match', { headers: { 'cache-control': 'max-age=600', etag: '"m"' }, body: 'matched' });
    await expectResults('/if-match', [{}, { headers: { 'if-match': '"m"' } }], ['MISS', 'BYPASS'], { MISS: 1, BYPASS: 1 });
  });

  test('requests that waited on a fill that was stored: HIT', async () => {
    f.on('/coalesced', { headers: { 'cache-control': 'max-age=600' }, body: 'shared', delayMs: 200 });
    const before = countsByResult(await f.metrics());
    const answers = await Promise.all([0, 1, 2].map(() => f.get('/coalesced')));
    assert.deepEqual(answers.map((answer) => header(answer, 'x-cache')).sort(), ['HIT', 'HIT', 'MISS']);
    assert.equal(f.originRequests('/coalesced').length, 1);
    await eventually('the waiters to be counted HIT', async () => difference(countsByResult(await f.metrics()), before), (counts) => (counts.HIT ?? 0) === 2);
  });
});

describe('X-Cache and cache_result when the store refuses an answer once its body is in', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    // The hot tier holds less than max_object_bytes: a 4000-byte answer passes the first check only.
    f = await startCachingFixture({ config: { hot_max_bytes: 2000, max_object_bytes: 8192 } });
  });
  after(() => f.close());

  test('MISS in the head, BYPASS counted', async () => {
    f.on('/too-large-for-the-tier', { headers: { 'cache-control': 'max-age=600' }, body: 'x'.repeat(4000) });
    const before = countsByResult(await f.metrics());
    const answers = [await f.get('/too-large-for-the-tier'), await f.get('/too-large-for-the-tier')];
    assert.deepEqual(answers.map((answer) => header(answer, 'x-cache')), ['MISS', 'MISS']);
    assert.equal(f.originRequests('/too-large-for-the-tier').length, 2, 'not stored');
    await eventually('both to be counted', async () => difference(countsByResult(await f.metrics()), before), (counts) => (counts.BYPASS ?? 0) === 2);
    assert.deepEqual(difference(countsByResult(await f.metrics()), before), { BYPASS: 2 });
  });
});
