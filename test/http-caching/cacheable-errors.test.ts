// Issue 14 item 9 through a real node: a 4xx/5xx that RFC 9110 §15.1 does not call heuristically
// cacheable is stored only with explicit freshness, and for at most the route's `max_error_ttl`, so a
// provoked error cannot be served to everyone for long; a route that forwards a method (here PURGE)
// has its 2xx invalidate, as RFC 9111 §4.4 says, while routes that do not forward it never do.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';

describe('errors are cached briefly, if at all', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture({ frozenClock: true, routeCache: { max_error_ttl: '10s' } });
  });
  after(() => f.close());

  test('a 503 with max-age=3600 is served for max_error_ttl (10 s), then fetched again', async () => {
    f.on('/err/503', { status: 503, headers: { 'cache-control': 'max-age=3600' }, body: 'down' });
    assert.equal(header(await f.get('/err/503'), 'x-cache'), 'MISS');
    f.svc.clock.advance(9_000);
    assert.equal(header(await f.get('/err/503'), 'x-cache'), 'HIT');
    f.svc.clock.advance(2_000);
    assert.notEqual(header(await f.get('/err/503'), 'x-cache'), 'HIT');
    assert.equal(f.originRequests('/err/503').length, 2);
  });

  test('a 400 with public and no lifetime is not stored at all', async () => {
    f.on('/err/400', { status: 400, headers: { 'cache-control': 'public', 'last-modified': new Date(f.svc.clock.now() - 86_400_000).toUTCString() }, body: 'bad' });
    await f.get('/err/400');
    assert.equal(header(await f.get('/err/400'), 'x-cache'), 'BYPASS');
    assert.equal(f.originRequests('/err/400').length, 2);
  });

  test('a heuristically cacheable 404 keeps its explicit lifetime', async () => {
    f.on('/err/404', { status: 404, headers: { 'cache-control': 'max-age=3600' }, body: 'none' });
    await f.get('/err/404');
    f.svc.clock.advance(60_000);
    assert.equal(header(await f.get('/err/404'), 'x-cache'), 'HIT');
  });
});

describe('max_error_ttl 0 and methods a route forwards', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture({
      config: {
        routes: [{ name: 'main', match: { path_prefix: '/' }, pool: 'origin', methods: ['GET', 'HEAD', 'PURGE'], cache: { max_error_ttl: 0 } }],
      },
    });
  });
  after(() => f.close());

  test('with max_error_ttl 0 a 500 is never stored, whatever its Cache-Control', async () => {
    f.on('/zero/500', { status: 500, headers: { 'cache-control': 'public, max-age=3600' }, body: 'boom' });
    await f.get('/zero/500');
    // An origin 5xx says MISS, stored or not (docs/http-caching.md, the X-Cache table); the origin
    // asked twice is what shows it was not stored.
    assert.equal(header(await f.get('/zero/500'), 'x-cache'), 'MISS');
    assert.equal(f.originRequests('/zero/500').length, 2);
  });

  test('a method the route lists is forwarded, and its 2xx invalidates; one it does not list gets 405', async () => {
    f.on('/zero/page', (request) => (request.method === 'GET' ? { headers: { 'cache-control': 'max-age=600' }, body: 'page' } : { status: 200, body: 'done' }));
    await f.get('/zero/page');
    assert.equal(header(await f.get('/zero/page'), 'x-cache'), 'HIT');
    assert.equal((await f.get('/zero/page', { method: 'POST', body: 'x' })).status, 405);
    assert.equal(header(await f.get('/zero/page'), 'x-cache'), 'HIT');
    assert.equal((await f.get('/zero/page', { method: 'PURGE' })).status, 200);
    assert.equal(header(await f.get('/zero/page'), 'x-cache'), 'MISS');
  });
});
