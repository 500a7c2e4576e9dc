// RFC 5861 through a real svc node: stale-while-revalidate (served STALE, one background
// revalidation however many clients ask) and stale-if-error (refused connection, timeout, 5xx), from
// Cache-Control and from a route's `cache.stale_while_revalidate` / `cache.stale_if_error`.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import type { OriginReply } from '../support/test-origin.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { eventually } from '../support/eventually.js';

describe('stale-while-revalidate through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  test('a stale entry within the window is served STALE to every client while one revalidation runs', async () => {
    f.on('/swr', (request, count): OriginReply => {
      if (request.headers['if-none-match'] === '"s1"') {
        return { status: 304, headers: { etag: '"s1"', 'cache-control': 'max-age=10, stale-while-revalidate=60', 'x-refreshed': String(count) }, delayMs: 800 };
      }
      return { headers: { etag: '"s1"', 'cache-control': 'max-age=10, stale-while-revalidate=60' }, body: 'swr body' };
    });
    await f.get('/swr');
    f.svc.clock.advance(20_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => f.get('/swr')));
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(answer.body, 'swr body');
      assert.equal(header(answer, 'x-cache'), 'STALE');
    }
    // Clients keep getting STALE until the one revalidation (800 ms at the origin) has landed.
    const fresh = await eventually('the revalidation landed', () => f.get('/swr'), (answer) => header(answer, 'x-cache') !== 'STALE');
    const requests = f.originRequests('/swr');
    assert.equal(requests.length, 2, 'exactly one background revalidation');
    assert.equal(requests[1]?.headers['if-none-match'], '"s1"');
    assert.equal(header(fresh, 'x-cache'), 'HIT');
    assert.equal(header(fresh, 'x-refreshed'), '1');
    assert.equal(fresh.body, 'swr body');
  });

  test('a background revalidation that gets a new 200 replaces the entry', async () => {
    f.on('/swr/replaced', (_request, count) => ({
      headers: { 'cache-control': 'max-age=10, stale-while-revalidate=60' },
      body: `version ${count}`,
    }));
    await f.get('/swr/replaced');
    f.svc.clock.advance(20_000);
    assert.equal((await f.get('/swr/replaced')).body, 'version 0');
    await eventually('the background fetch', () => f.originRequests('/swr/replaced').length, (asked) => asked === 2);
    const hit = await eventually('the new version served', () => f.get('/swr/replaced'), (answer) => answer.body === 'version 1');
    assert.equal(header(hit, 'x-cache'), 'HIT');
  });

  test('beyond the window the entry is revalidated before it is served', async () => {
    f.on('/swr/beyond', (request) =>
      request.headers['if-none-match'] === '"b"'
        ? { status: 304, headers: { etag: '"b"', 'cache-control': 'max-age=10, stale-while-revalidate=60' } }
        : { headers: { etag: '"b"', 'cache-control': 'max-age=10, stale-while-revalidate=60' }, body: 'beyond' },
    );
    await f.get('/swr/beyond');
    f.svc.clock.advance(100_000);
    const answer = await f.get('/swr/beyond');
    assert.equal(header(answer, 'x-cache'), 'REVALIDATED');
  });
});

type Failure = 'refused' | 'timeout' | '500' | '503';

describe('stale-if-error through svc', { timeout: 60_000 }, () => {
  const failures: Failure[] = ['refused', 'timeout', '500', '503'];
  for (const failure of failures) {
    test(`origin ${failure} within the window: the stale entry is served STALE`, async () => {
      // stale_if_unreachable off, so that only stale-if-error is at work.
      const f = await startCachingFixture({ responseTimeout: '300ms', config: { stale_if_unreachable: 0 } });
      try {
        f.on('/sie', { headers: { etag: '"e"', 'cache-control': 'max-age=10, stale-if-error=60' }, body: 'stale but whole' });
        await f.get('/sie');
        f.svc.clock.advance(30_000);
        if (failure === 'refused') await f.origin.close();
        else if (failure === 'timeout') f.on('/sie', { hang: true });
        else f.on('/sie', { status: Number(failure), body: 'origin error' });
        const answer = await f.get('/sie');
        assert.equal(answer.status, 200);
        assert.equal(answer.body, 'stale but whole');
        assert.equal(header(answer, 'x-cache'), 'STALE');
        // Beyond the window the failure shows.
        f.svc.clock.advance(60_000);
        const beyond = await f.get('/sie');
        assert.equal(beyond.status, failure === 'refused' ? 502 : failure === 'timeout' ? 504 : Number(failure));
      } finally {
        await f.close();
      }
    });
  }
});

describe('route overrides of the stale windows', { timeout: 60_000 }, () => {
  test('cache.stale_while_revalidate applies when the origin gives none', async () => {
    const f = await startCachingFixture({ routeCache: { stale_while_revalidate: '30s' } });
    try {
      f.on('/route-swr', { headers: { 'cache-control': 'max-age=10' }, body: 'route swr' });
      await f.get('/route-swr');
      f.svc.clock.advance(25_000);
      const answer = await f.get('/route-swr');
      assert.equal(header(answer, 'x-cache'), 'STALE');
      await eventually('the background revalidation', () => f.originRequests('/route-swr').length, (asked) => asked === 2);
    } finally {
      await f.close();
    }
  });

  test('cache.stale_while_revalidate replaces a longer origin window', async () => {
    const f = await startCachingFixture({ routeCache: { stale_while_revalidate: '5s' } });
    try {
      f.on('/route-swr-short', { headers: { 'cache-control': 'max-age=10, stale-while-revalidate=600' }, body: 'short' });
      await f.get('/route-swr-short');
      f.svc.clock.advance(30_000);
      assert.equal(header(await f.get('/route-swr-short'), 'x-cache'), 'MISS');
    } finally {
      await f.close();
    }
  });

  test('cache.stale_if_error applies when the origin gives none, and a shorter one replaces the origin\'s', async () => {
    const f = await startCachingFixture({ routeCache: { stale_if_error: '30s' } });
    try {
      f.on('/route-sie', (_request, count) => (count === 0 ? { headers: { 'cache-control': 'max-age=10' }, body: 'route sie' } : { status: 500, body: 'down' }));
      f.on('/route-sie-long', (_request, count) =>
        count === 0 ? { headers: { 'cache-control': 'max-age=10, stale-if-error=600' }, body: 'long' } : { status: 500, body: 'down' },
      );
      await f.get('/route-sie');
      await f.get('/route-sie-long');
      f.svc.clock.advance(20_000);
      const within = await f.get('/route-sie');
      assert.equal(header(within, 'x-cache'), 'STALE');
      assert.equal(within.body, 'route sie');
      f.svc.clock.advance(100_000);
      assert.equal((await f.get('/route-sie-long')).status, 500, "the route's 30 s replaced the origin's 600 s");
    } finally {
      await f.close();
    }
  });

  test('must-revalidate wins over the route windows', async () => {
    const f = await startCachingFixture({ routeCache: { stale_while_revalidate: '60s', stale_if_error: '60s' } });
    try {
      f.on('/route-mr', (_request, count) =>
        count === 0 ? { headers: { 'cache-control': 'max-age=10, must-revalidate' }, body: 'strict' } : { status: 500, body: 'down' },
      );
      await f.get('/route-mr');
      f.svc.clock.advance(20_000);
      const answer = await f.get('/route-mr');
      assert.equal(answer.status, 500);
      assert.notEqual(answer.body, 'strict');
    } finally {
      await f.close();
    }
  });
});
