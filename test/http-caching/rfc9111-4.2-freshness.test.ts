// RFC 9111 §4.2 through a real svc node: freshness lifetime (max-age, s-maxage, Expires, the
// heuristic only where §4.2.2 allows it) and Age (§4.2.3, §5.1), with time moved by the node's clock.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';

const HOUR_MS = 3_600_000;

interface Step {
  /** Time moved before this request, in ms. */
  advanceMs: number;
  xCache: string;
}

interface FreshnessCase {
  name: string;
  /** Origin fields; `now` is the node's clock when the origin answers. */
  headers: (now: number) => Record<string, string>;
  status?: number;
  steps: Step[];
}

const httpDate = (ms: number): string => new Date(ms).toUTCString();

const cases: FreshnessCase[] = [
  {
    name: 'max-age keeps the entry fresh for that long, then it is fetched again',
    headers: () => ({ 'cache-control': 'max-age=60' }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 59_000, xCache: 'HIT' }, { advanceMs: 2_000, xCache: 'MISS' }],
  },
  {
    name: 's-maxage overrides max-age for a shared cache (§5.2.2.10)',
    headers: () => ({ 'cache-control': 'max-age=1, s-maxage=60' }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }, { advanceMs: 31_000, xCache: 'MISS' }],
  },
  {
    name: 'Expires − Date gives the lifetime when no max-age is present',
    headers: (now) => ({ expires: httpDate(now + 60_000) }),
    // Fetched again once expired, the origin's answer (same Expires) is already stale: not stored.
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }, { advanceMs: 31_000, xCache: 'BYPASS' }],
  },
  {
    name: 'max-age wins over Expires (§5.3)',
    headers: (now) => ({ 'cache-control': 'max-age=10', expires: httpDate(now + HOUR_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 5_000, xCache: 'HIT' }, { advanceMs: 10_000, xCache: 'MISS' }],
  },
  {
    name: 'an invalid Expires means already expired: without a validator it is not stored',
    headers: () => ({ expires: '0' }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
  {
    name: 'heuristic freshness is 10 % of the time since Last-Modified (§4.2.2)',
    headers: (now) => ({ 'last-modified': httpDate(now - 1_000_000) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 90_000, xCache: 'HIT' }, { advanceMs: 20_000, xCache: 'REVALIDATED' }],
  },
  {
    name: 'the heuristic is capped at 24 hours',
    headers: (now) => ({ 'last-modified': httpDate(now - 100 * 24 * HOUR_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 23 * HOUR_MS, xCache: 'HIT' }, { advanceMs: 2 * HOUR_MS, xCache: 'REVALIDATED' }],
  },
  {
    name: 'no heuristic for a status that is not heuristically cacheable (302)',
    status: 302,
    headers: (now) => ({ location: '/elsewhere', 'last-modified': httpDate(now - 1_000_000) }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
  {
    // §4.2.2 would allow a heuristic here; svc wants explicit freshness for other statuses (issue 14).
    name: 'public alone gives a 302 no heuristic lifetime: not stored',
    status: 302,
    headers: (now) => ({ location: '/elsewhere', 'cache-control': 'public', 'last-modified': httpDate(now - 1_000_000) }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
  {
    name: 'no explicit freshness and no Last-Modified: nothing to reuse, so nothing stored',
    headers: () => ({ 'content-type': 'text/plain' }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
];

describe('RFC 9111 §4.2 freshness through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  cases.forEach((c, i) => {
    test(c.name, async () => {
      const path = `/freshness/${i}`;
      // The origin's fields are fixed at the first request: the resource does not change.
      const fields = c.headers(f.svc.clock.now());
      f.on(path, (request) => {
        // A conditional request gets a 304 so a heuristic entry's revalidation is visible as such.
        if (request.headers['if-modified-since'] !== undefined) return { status: 304, headers: fields };
        return { status: c.status ?? 200, headers: fields, body: `body ${i}` };
      });
      const seen: string[] = [];
      for (const step of c.steps) {
        f.svc.clock.advance(step.advanceMs);
        const answer = await f.get(path);
        assert.equal(answer.status, c.status ?? 200);
        seen.push(header(answer, 'x-cache') ?? '');
      }
      assert.deepEqual(seen, c.steps.map((s) => s.xCache));
    });
  });
});

describe('RFC 9111 §4.2.3 Age through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    // Exact Age values: real time must not carry an apparent age over a whole second.
    f = await startCachingFixture({ frozenClock: true });
  });
  after(() => f.close());

  test('an upstream Age is carried, grows on hits, and counts against max-age', async () => {
    f.on('/age/upstream', { headers: { 'cache-control': 'max-age=150', age: '100' }, body: 'aged' });
    const miss = await f.get('/age/upstream');
    assert.equal(header(miss, 'age'), '100');
    f.svc.clock.advance(40_000);
    const hit = await f.get('/age/upstream');
    assert.equal(header(hit, 'x-cache'), 'HIT');
    assert.equal(header(hit, 'age'), '140');
    f.svc.clock.advance(20_000);
    const expired = await f.get('/age/upstream');
    assert.equal(header(expired, 'x-cache'), 'MISS', '160 s old with max-age=150 is stale');
    assert.equal(f.originRequests('/age/upstream').length, 2);
  });

  test('a Date in the past gives an apparent age (corrected_initial_age)', async () => {
    f.on('/age/apparent', () => ({ headers: { 'cache-control': 'max-age=60', date: httpDate(f.svc.clock.now() - 30_000) }, body: 'late' }));
    const miss = await f.get('/age/apparent');
    assert.equal(header(miss, 'age'), '30');
    f.svc.clock.advance(25_000);
    assert.equal(header(await f.get('/age/apparent'), 'x-cache'), 'HIT');
    f.svc.clock.advance(10_000);
    assert.equal(header(await f.get('/age/apparent'), 'x-cache'), 'MISS');
  });

  test('Age grows by the time spent in svc on every hit', async () => {
    f.on('/age/grows', { headers: { 'cache-control': 'max-age=600' }, body: 'grows' });
    await f.get('/age/grows');
    const ages: number[] = [];
    for (let i = 0; i < 3; i++) {
      f.svc.clock.advance(7_000);
      const hit = await f.get('/age/grows');
      assert.equal(header(hit, 'x-cache'), 'HIT');
      ages.push(Number(header(hit, 'age')));
    }
    // The origin's Date has whole seconds, so the entry starts under 1 s old; Age counts whole seconds.
    assert.deepEqual(ages, [7, 14, 21]);
  });
});
