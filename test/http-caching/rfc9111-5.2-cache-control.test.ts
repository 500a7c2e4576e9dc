// RFC 9111 §5.2 and §5.2.3 through a real svc node: cache directives pass through svc unchanged,
// unknown ones are ignored, and how svc reads what the grammar does not allow (docs/http-caching.md,
// "Reading Cache-Control").
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { OriginReply } from '../support/test-origin.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { exchange } from './exchanges.js';
import { R, requirement } from './rfc-requirements.js';

describe('RFC 9111 §5.2 Cache-Control through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  requirement(R.passDirectives, async () => {
    const cacheControl = 'max-age=600, stale-while-revalidate=30, x-vendor="a, b"';
    await exchange(f, '/pass', { headers: { 'cache-control': cacheControl, 'cdn-cache-control': 'max-age=60' }, body: 'passed' }, [
      { headers: { 'cache-control': 'max-stale=5, x-client-ext' }, xCache: 'MISS', fields: { 'cache-control': cacheControl, 'cdn-cache-control': 'max-age=60' } },
      { xCache: 'HIT', fields: { 'cache-control': cacheControl, 'cdn-cache-control': 'max-age=60' } },
    ]);
    assert.equal(f.originRequests('/pass')[0]?.headers['cache-control'], 'max-stale=5, x-client-ext', "the client's directives reach the origin");
    f.on('/pass/unsafe', { status: 201, headers: { 'cache-control': 'no-store, x-vendor' }, body: 'created' });
    await exchange(f, '/pass/unsafe', undefined, [{ method: 'POST', body: '{}', headers: { 'cache-control': 'no-transform' }, status: 201, fields: { 'cache-control': 'no-store, x-vendor' } }]);
    assert.equal(f.originRequests('/pass/unsafe')[0]?.headers['cache-control'], 'no-transform');
  });

  requirement(R.unknownDirectives, async () => {
    await exchange(f, '/unknown', { headers: { 'cache-control': 'x-first, max-age=60, community="UCI", x-list="a, b", x-token=tok' }, body: 'unknown' }, [
      { xCache: 'MISS' },
      { advanceMs: 30_000, xCache: 'HIT' },
      { advanceMs: 31_000, xCache: 'MISS', originRequests: 2 },
    ]);
  });

  const readings: { name: string; cacheControl: string; steps: { advanceMs: number; xCache: string }[] }[] = [
    { name: 'spaces around "=" are accepted: max-age = 60', cacheControl: 'max-age = 60', steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }, { advanceMs: 31_000, xCache: 'REVALIDATED' }] },
    { name: 'a quoted delta-seconds is accepted: max-age="60"', cacheControl: 'max-age="60"', steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }] },
    { name: 'a directive given twice keeps its first value', cacheControl: 'max-age=60, max-age=5', steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }] },
    { name: 'an invalid max-age reads as 0: stale at once', cacheControl: 'max-age=soon', steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 0, xCache: 'REVALIDATED' }] },
    { name: 'names are case-insensitive', cacheControl: 'MAX-AGE=60, No-Store', steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }] },
    { name: 'no-store wins over max-age', cacheControl: 'max-age=60, no-store', steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }] },
  ];
  readings.forEach((c, i) => {
    test(`svc: ${c.name}`, async () => {
      const path = `/reading/${i}`;
      const reply = (request: { headers: Record<string, string | string[] | undefined> }): OriginReply =>
        request.headers['if-none-match'] === '"r"'
          ? { status: 304, headers: { etag: '"r"', 'cache-control': c.cacheControl } }
          : { headers: { etag: '"r"', 'cache-control': c.cacheControl }, body: 'read' };
      await exchange(f, path, reply, c.steps);
    });
  });

  test('svc: spaces around "=" in a field-name list: private = "set-cookie" stores without the cookie', async () => {
    await exchange(f, '/reading/private', { headers: { 'cache-control': 'private = "set-cookie", max-age=60', 'set-cookie': 'a=1' }, body: 'spaced' }, [
      { xCache: 'MISS', fields: { 'set-cookie': 'a=1' } },
      { xCache: 'HIT', fields: { 'set-cookie': undefined } },
    ]);
  });
});
