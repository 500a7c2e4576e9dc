// RFC 9213 and Surrogate-Control through a real svc node: the targeted fields govern svc's storage
// and freshness ahead of Cache-Control, and the surrogate-only fields never reach clients
// (docs/http-caching.md lists which fields reach clients and why).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import type { OriginReply } from '../support/test-origin.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { exchange } from './exchanges.js';
import { R, requirement, type Requirement } from './rfc-requirements.js';

interface TargetedCase {
  name: string;
  requirement: Requirement;
  headers: (now: number) => Record<string, string>;
  /** Time moved before the second request. */
  advanceMs: number;
  xCache: [string, string];
}

const cases: TargetedCase[] = [
  {
    name: 'CDN-Cache-Control max-age beats Cache-Control no-store',
    requirement: R.targetedGoverns,
    headers: () => ({ 'cdn-cache-control': 'max-age=60', 'cache-control': 'no-store' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'CDN-Cache-Control no-store beats Cache-Control max-age',
    requirement: R.targetedCoreDirectives,
    headers: () => ({ 'cdn-cache-control': 'no-store', 'cache-control': 'max-age=60' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 'Surrogate-Control max-age beats Cache-Control private',
    requirement: R.targetedGoverns,
    headers: () => ({ 'surrogate-control': 'max-age=60', 'cache-control': 'private' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'CDN-Cache-Control beats Surrogate-Control',
    requirement: R.targetedGoverns,
    headers: () => ({ 'cdn-cache-control': 'max-age=10', 'surrogate-control': 'max-age=600' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'MISS'],
  },
  {
    name: 'a targeted max-age is shorter than Cache-Control for svc only',
    requirement: R.targetedCoreDirectives,
    headers: () => ({ 'cdn-cache-control': 'max-age=10', 'cache-control': 'max-age=600' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'MISS'],
  },
  {
    name: 'Expires is ignored when a targeted field governs',
    requirement: R.targetedGoverns,
    headers: (now) => ({ 'cdn-cache-control': 'max-age=60', expires: new Date(now - 60_000).toUTCString() }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'an invalid CDN-Cache-Control is ignored as a whole: Cache-Control governs',
    requirement: R.targetedInvalidIgnored,
    headers: () => ({ 'cdn-cache-control': 'max-age=60,,,;;', 'cache-control': 'no-store' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 'spaces around "=" make CDN-Cache-Control invalid (RFC 8941): Cache-Control governs',
    requirement: R.targetedInvalidIgnored,
    headers: () => ({ 'cdn-cache-control': 'max-age = 600', 'cache-control': 'max-age=10' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'MISS'],
  },
  {
    name: 'an empty CDN-Cache-Control is ignored: Cache-Control governs',
    requirement: R.targetedInvalidIgnored,
    headers: () => ({ 'cdn-cache-control': '', 'cache-control': 'max-age=60' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'max-age="10000" (a String) is not consumed: it does not override Cache-Control no-store',
    requirement: R.targetedWrongTypeIgnored,
    headers: () => ({ 'cdn-cache-control': 'max-age="10000"', 'cache-control': 'no-store' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 'max-age=1.5 (a Decimal) is not rounded',
    requirement: R.targetedWrongTypeIgnored,
    headers: () => ({ 'cdn-cache-control': 'max-age=1.5', 'cache-control': 'max-age=600' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 's-maxage=sixty (a Token) is not consumed',
    requirement: R.targetedWrongTypeIgnored,
    headers: () => ({ 'cdn-cache-control': 's-maxage=sixty, public', 'cache-control': 'max-age=600' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 'svc: a restrictive directive of the wrong type still restricts: no-store=?0 is no-store',
    requirement: R.targetedWrongTypeIgnored,
    headers: () => ({ 'cdn-cache-control': 'max-age=600, no-store=?0' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 'svc: private=1 (an Integer) is unqualified private: not stored',
    requirement: R.targetedWrongTypeIgnored,
    headers: () => ({ 'cdn-cache-control': 'max-age=600, private=1', 'cache-control': 'max-age=600' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 'private in CDN-Cache-Control: not stored, whatever Cache-Control says',
    requirement: R.targetedCoreDirectives,
    headers: () => ({ 'cdn-cache-control': 'private, max-age=600', 'cache-control': 'public, max-age=600' }),
    advanceMs: 0,
    xCache: ['BYPASS', 'BYPASS'],
  },
  {
    name: 's-maxage in CDN-Cache-Control',
    requirement: R.targetedOtherDirectives,
    headers: () => ({ 'cdn-cache-control': 's-maxage=60', 'cache-control': 'no-store' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
  {
    name: 'a targeted field not on svc\'s target list changes nothing',
    requirement: R.targetedOthersPassed,
    headers: () => ({ 'examplecdn-cache-control': 'no-store', 'cache-control': 'max-age=60' }),
    advanceMs: 30_000,
    xCache: ['MISS', 'HIT'],
  },
];

describe('RFC 9213 targeted cache control through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  cases.forEach((c, i) => {
    requirement(c.requirement, async () => {
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
      for (const name of ['cdn-cache-control', 'examplecdn-cache-control']) {
        if (fields[name] !== undefined) assert.equal(header(second, name), fields[name], `${name} is passed through`);
      }
    }, c.name);
  });

  requirement(
    R.targetedCoreDirectives,
    async () => {
      await exchange(
        f,
        '/targeted/no-cache',
        (request): OriginReply =>
          request.headers['if-none-match'] === '"t"'
            ? { status: 304, headers: { etag: '"t"', 'cdn-cache-control': 'no-cache, max-age=600' } }
            : { headers: { etag: '"t"', 'cdn-cache-control': 'no-cache, max-age=600', 'cache-control': 'max-age=600' }, body: 'validated' },
        [{ xCache: 'MISS' }, { xCache: 'REVALIDATED', answerBody: 'validated', originRequests: 2 }],
      );
    },
    'no-cache in CDN-Cache-Control: validated on every reuse',
  );

  requirement(
    R.targetedCoreDirectives,
    async () => {
      // stale-if-error would serve the stored response instead of the 503; must-revalidate forbids it.
      await exchange(
        f,
        '/targeted/must-revalidate',
        (_request, count): OriginReply =>
          count === 0
            ? { headers: { 'cdn-cache-control': 'max-age=10, must-revalidate, stale-if-error=600', 'cache-control': 'max-age=600' }, body: 'strict' }
            : { status: 503, body: 'down' },
        [{ xCache: 'MISS' }, { advanceMs: 20_000, status: 503, answerBody: 'down' }],
      );
    },
    'must-revalidate in CDN-Cache-Control: no stale answer once expired',
  );

  requirement(
    R.targetedOtherDirectives,
    async () => {
      await exchange(
        f,
        '/targeted/swr',
        (_request, count) => ({ headers: { 'cdn-cache-control': 'max-age=10, stale-while-revalidate=60' }, body: `version ${count}` }),
        [{ xCache: 'MISS' }, { advanceMs: 20_000, xCache: 'STALE', answerBody: 'version 0' }],
      );
    },
    'stale-while-revalidate in CDN-Cache-Control',
  );

  test('svc: surrogate-only fields never reach clients; CDN-Cache-Control and Cache-Tag do', async () => {
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

  test('svc: Surrogate-Control max-age=N+M serves stale for M seconds when the origin fails', async () => {
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
