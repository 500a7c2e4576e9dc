// RFC 9111 §4.4 through a real svc node: a successful unsafe request invalidates its target and the
// same-origin Location / Content-Location URIs, never another host's, and never after an error.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { R, requirement } from './rfc-requirements.js';

describe('RFC 9111 §4.4 invalidation through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  /** Stores `path` and checks that it is a HIT. */
  async function cache(path: string, host?: string): Promise<void> {
    f.on(path, (request) =>
      request.method === 'GET' ? { headers: { 'cache-control': 'max-age=600' }, body: `cached ${path}` } : { status: 204 },
    );
    const options = host ? { headers: { host } } : {};
    await f.get(path, options);
    assert.equal(header(await f.get(path, options), 'x-cache'), 'HIT', `${path} is cached`);
  }

  async function xCache(path: string, host?: string): Promise<string | undefined> {
    return header(await f.get(path, host ? { headers: { host } } : {}), 'x-cache');
  }

  // PURGE is not forwarded by the default route (issue 14); a route that lists it: cacheable-errors.test.ts.
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    requirement(R.invalidateTarget, async () => {
      const path = `/invalidate/${method.toLowerCase()}`;
      await cache(path);
      const unsafe = await f.get(path, { method, body: 'change' });
      assert.equal(unsafe.status, 204);
      assert.equal(header(unsafe, 'x-cache'), 'BYPASS');
      assert.equal(await xCache(path), 'MISS');
    }, `a successful ${method} invalidates its target`);
  }

  test('svc: Location and Content-Location on the same origin are invalidated too', async () => {
    await cache('/invalidate/list');
    await cache('/invalidate/item?id=7');
    await cache('/invalidate/untouched');
    f.on('/invalidate/create', { status: 201, headers: { location: '/invalidate/list', 'content-location': 'item?id=7' }, body: 'created' });
    assert.equal((await f.get('/invalidate/create', { method: 'POST', body: '{}' })).status, 201);
    assert.equal(await xCache('/invalidate/list'), 'MISS');
    assert.equal(await xCache('/invalidate/item?id=7'), 'MISS');
    assert.equal(await xCache('/invalidate/untouched'), 'HIT');
  });

  requirement(R.invalidateSameOriginOnly, async () => {
    await cache('/invalidate/foreign', 'other.example');
    f.on('/invalidate/redirecting', { status: 303, headers: { location: 'http://other.example/invalidate/foreign' }, body: '' });
    assert.equal((await f.get('/invalidate/redirecting', { method: 'POST', body: '{}' })).status, 303);
    assert.equal(await xCache('/invalidate/foreign', 'other.example'), 'HIT');
  }, 'a Location on another host is never invalidated');

  test('svc: an error answer to an unsafe method invalidates nothing', async () => {
    await cache('/invalidate/failing');
    f.on('/invalidate/failing', (request) =>
      request.method === 'GET' ? { headers: { 'cache-control': 'max-age=600' }, body: 'cached' } : { status: 500, body: 'failed' },
    );
    assert.equal((await f.get('/invalidate/failing', { method: 'DELETE' })).status, 500);
    assert.equal(await xCache('/invalidate/failing'), 'HIT');
  });

  test('svc: a method the route does not forward (PURGE from the internet) gets 405 and invalidates nothing (issue 14)', async () => {
    await cache('/invalidate/purge-attempt');
    const attempts = f.originRequests('/invalidate/purge-attempt').length;
    for (const method of ['PURGE', 'TRACE', 'PROPFIND']) {
      const answer = await f.get('/invalidate/purge-attempt', { method });
      assert.equal(answer.status, 405, method);
      assert.match(header(answer, 'allow') ?? '', /GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE/);
    }
    assert.equal(f.originRequests('/invalidate/purge-attempt').length, attempts, 'never forwarded');
    assert.equal(await xCache('/invalidate/purge-attempt'), 'HIT');
  });

  test('svc: a Location on the same host but another scheme is never invalidated', async () => {
    await cache('/invalidate/other-scheme');
    const host = new URL(f.svc.dataUrl).host;
    f.on('/invalidate/scheme-redirect', { status: 303, headers: { location: `https://${host}/invalidate/other-scheme` }, body: '' });
    assert.equal((await f.get('/invalidate/scheme-redirect', { method: 'POST', body: '{}' })).status, 303);
    assert.equal(await xCache('/invalidate/other-scheme'), 'HIT');
  });

  test('svc: safe methods other than GET and HEAD invalidate nothing', async () => {
    await cache('/invalidate/options');
    f.on('/invalidate/options', (request) =>
      request.method === 'GET' ? { headers: { 'cache-control': 'max-age=600' }, body: 'cached' } : { status: 204 },
    );
    assert.equal((await f.get('/invalidate/options', { method: 'OPTIONS' })).status, 204);
    assert.equal(await xCache('/invalidate/options'), 'HIT');
  });
});
