// RFC 9213 and Surrogate-Control through a real svc node: the targeted fields govern svc's storage
// and freshness ahead of Cache-Control, and the surrogate-only fields never reach clients
// (docs/http-caching.md lists which fields reach clients and why).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';

interface TargetedCase {
  name: string;
  headers: (now: number) => Record<string, string>;
  /** Time moved before the second request. */
  advanceMs: number;
  xCache: [string, string];
}

const cases: TargetedCase[] = [
  {
    name: 'CDN-Cache-Control max-age beats Cache-Control no-store',
    headers: () => ({ 'cdn-cache-control': 'max-age=60', 'cache-control': 'no-store' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'CDN-Cache-Control no-store beats Cache-Control max-age',
    headers: () => ({ 'cdn-cache-control': 'no-store', 'cache-control': 'max-age=60' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 'Surrogate-Control max-age beats Cache-Control private',
    headers: () => ({ 'surrogate-control': 'max-age=60', 'cache-control': 'private' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'CDN-Cache-Control beats Surrogate-Control',
    headers: () => ({ 'cdn-cache-control': 'max-age=10', 'surrogate-control': 'max-age=600' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'MISS'],
  },
  {
    name: 'a targeted max-age is shorter than Cache-Control for svc only',
    headers: () => ({ 'cdn-cache-control': 'max-age=10', 'cache-control': 'max-age=600' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'MISS'],
  },
  {
    name: 'Expires is ignored when a targeted field governs (§2.2)',
    headers: (now) => ({ 'cdn-cache-control': 'max-age=60', expires: new Date(now - 60_000).toUTCString() }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'an invalid CDN-Cache-Control is ignored as a whole: Cache-Control governs',
    headers: () => ({ 'cdn-cache-control': 'max-age=60,,,;;', 'cache-control': 'no-store' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
];

describe('RFC 9213 targeted cache control through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  cases.forEach((c, i) => {
    test(c.name, async () => {
      const path = `/targeted/${i}`;
      const fields = c.headers(f.svc.clock.now());
      f.on(path, { headers: fields, body: `targeted ${i}` });
      const first = await f.get(path);
      f.svc.clock.advance(c.advanceMs);
      const second = await f.get(path);
      assert.deepEqual([header(first, 'x-cache'), header(second, 'x-cache')], c.xCache);
      assert.equal(second.body, `targeted ${i}`);
      // Cache-Control reaches clients untouched: browsers still obey it.
      if (fields['cache-control'] !== undefined) assert.equal(header(second, 'cache-control'), fields['cache-control']);
    });
  });

  test('surrogate-only fields never reach clients; CDN-Cache-Control and Cache-Tag do', async () => {
    f.on('/targeted/fields', {
      headers: {
        'surrogate-control': 'max-age=600',
        'surrogate-key': 'k1 k2',
        'x-cache-tags': 't1,t2',
        'cache-tag': 'c1',
        'cdn-cache-control': 'max-age=600',
        'cache-control': 'max-age=5',
      },
      body: 'fields',
    });
    for (const answer of [await f.get('/targeted/fields'), await f.get('/targeted/fields')]) {
      assert.equal(header(answer, 'surrogate-control'), undefined);
      assert.equal(header(answer, 'surrogate-key'), undefined);
      assert.equal(header(answer, 'x-cache-tags'), undefined);
      assert.equal(header(answer, 'cache-tag'), 'c1');
      assert.equal(header(answer, 'cdn-cache-control'), 'max-age=600');
      assert.equal(header(answer, 'cache-control'), 'max-age=5');
    }
  });

  test('Surrogate-Control max-age=N+M serves stale for M seconds when the origin fails', async () => {
    f.on('/targeted/extension', (_request, count) =>
      count === 0 ? { headers: { 'surrogate-control': 'max-age=10+100' }, body: 'extended' } : { status: 503, body: 'down' },
    );
    await f.get('/targeted/extension');
    f.svc.clock.advance(60_000);
    const stale = await f.get('/targeted/extension');
    assert.equal(stale.status, 200);
    assert.equal(stale.body, 'extended');
    assert.equal(header(stale, 'x-cache'), 'STALE');
    f.svc.clock.advance(60_000);
    const beyond = await f.get('/targeted/extension');
    assert.equal(beyond.status, 503);
  });
});
