// RFC 9111 §4.2 through a real svc node: freshness lifetime (max-age, s-maxage, Expires, the
// heuristic only where §4.2.2 allows it), dates (§4.2, RFC 9110 §5.6.7), Age (§4.2.3, §5.1), Expires
// (§5.3), delta-seconds (§1.2.2) and serving stale (§4.2.4), with time moved by the node's clock.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture, type FixtureOptions } from '../support/caching-fixture.js';
import { exchange } from './exchanges.js';
import { R, requirement, type Requirement } from './rfc-requirements.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface Step {
  /** Time moved before this request, in ms. */
  advanceMs: number;
  xCache: string;
}

interface FreshnessCase {
  name: string;
  /** The requirement the case proves, when it proves one. */
  requirement?: Requirement;
  /** Origin fields; `now` is the node's clock when the origin answers. */
  headers: (now: number) => Record<string, string>;
  status?: number;
  steps: Step[];
}

const httpDate = (ms: number): string => new Date(ms).toUTCString();

/** RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT`. */
function rfc850Date(ms: number): string {
  const date = new Date(ms);
  const weekday = date.toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' });
  const [, day, month, , time] = httpDate(ms).split(' ') as [string, string, string, string, string];
  return `${weekday}, ${day}-${month}-${String(date.getUTCFullYear() % 100).padStart(2, '0')} ${time} GMT`;
}

/** asctime form: `Sun Nov  6 08:49:37 1994`. */
function asctimeDate(ms: number): string {
  const [weekday, day, month, year, time] = httpDate(ms).split(' ') as [string, string, string, string, string];
  return `${weekday.slice(0, 3)} ${month} ${String(Number(day)).padStart(2, ' ')} ${time} ${year}`;
}

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
    name: 'max-age wins over Expires',
    requirement: R.expiresIgnoredWithMaxAge,
    headers: (now) => ({ 'cache-control': 'max-age=10', expires: httpDate(now + HOUR_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 5_000, xCache: 'HIT' }, { advanceMs: 10_000, xCache: 'MISS' }],
  },
  {
    name: 'max-age wins over an Expires in the past',
    requirement: R.expiresIgnoredWithMaxAge,
    headers: (now) => ({ 'cache-control': 'max-age=60', expires: httpDate(now - HOUR_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }],
  },
  {
    name: 's-maxage wins over an Expires in the past',
    requirement: R.expiresIgnoredWithSMaxage,
    headers: (now) => ({ 'cache-control': 's-maxage=60', expires: httpDate(now - HOUR_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }],
  },
  {
    name: 'Expires: 0 means already expired: without a validator it is not stored',
    requirement: R.expiresInvalidIsPast,
    headers: () => ({ expires: '0' }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
  {
    name: 'an Expires that is not a date means already expired, even with public',
    requirement: R.expiresInvalidIsPast,
    headers: () => ({ 'cache-control': 'public', expires: 'next week' }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
  {
    name: 'an Expires in lower case is read (IMF-fixdate)',
    requirement: R.datesCaseInsensitive,
    headers: (now) => ({ expires: httpDate(now + 60_000).toLowerCase() }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }, { advanceMs: 31_000, xCache: 'BYPASS' }],
  },
  {
    name: 'an Expires in upper case is read (RFC 850 form)',
    requirement: R.datesCaseInsensitive,
    headers: (now) => ({ expires: rfc850Date(now + 60_000).toUpperCase() }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }],
  },
  {
    name: 'an Expires in the RFC 850 form',
    requirement: R.datesAllFormats,
    headers: (now) => ({ expires: rfc850Date(now + 60_000) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }, { advanceMs: 31_000, xCache: 'BYPASS' }],
  },
  {
    name: 'an Expires in the asctime form',
    requirement: R.datesAllFormats,
    headers: (now) => ({ expires: asctimeDate(now + 60_000) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 30_000, xCache: 'HIT' }, { advanceMs: 31_000, xCache: 'BYPASS' }],
  },
  {
    name: 'an Expires in UTC rather than GMT is invalid, so already expired',
    requirement: R.otherZoneInvalid,
    headers: (now) => ({ expires: httpDate(now + HOUR_MS).replace('GMT', 'UTC') }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
  {
    name: 'an Expires with a numeric zone is invalid, so already expired',
    requirement: R.otherZoneInvalid,
    headers: (now) => ({ expires: httpDate(now + HOUR_MS).replace('GMT', '+0000') }),
    steps: [{ advanceMs: 0, xCache: 'BYPASS' }, { advanceMs: 0, xCache: 'BYPASS' }],
  },
  {
    name: 'a max-age beyond 2^31 is read as 2^31 seconds, not as an overflow',
    requirement: R.deltaSecondsOverflow,
    headers: () => ({ 'cache-control': 'max-age=99999999999999999999' }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 365 * DAY_MS, xCache: 'HIT' }],
  },
  {
    name: 'heuristic freshness is 10 % of the time since Last-Modified (§4.2.2)',
    headers: (now) => ({ 'last-modified': httpDate(now - 1_000_000) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 90_000, xCache: 'HIT' }, { advanceMs: 20_000, xCache: 'REVALIDATED' }],
  },
  {
    name: 'the heuristic is capped at 24 hours',
    headers: (now) => ({ 'last-modified': httpDate(now - 100 * DAY_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 23 * HOUR_MS, xCache: 'HIT' }, { advanceMs: 2 * HOUR_MS, xCache: 'REVALIDATED' }],
  },
  {
    name: 'an Expires equal to Date is explicit: no heuristic from Last-Modified',
    requirement: R.noHeuristicWhenExplicit,
    headers: (now) => ({ expires: httpDate(now), 'last-modified': httpDate(now - 100 * DAY_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 1_000, xCache: 'REVALIDATED' }],
  },
  {
    name: 'max-age=0 is explicit: no heuristic from Last-Modified',
    requirement: R.noHeuristicWhenExplicit,
    headers: (now) => ({ 'cache-control': 'max-age=0', 'last-modified': httpDate(now - 100 * DAY_MS) }),
    steps: [{ advanceMs: 0, xCache: 'MISS' }, { advanceMs: 1_000, xCache: 'REVALIDATED' }],
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
    // Only the steps move time: the origin's Date has whole seconds, so an entry stored up to a
    // second after its Date is that much older already, and real time flowing on a loaded machine
    // carried a 59 s step past a 60 s max-age (1 run in 3 beside another test run).
    f = await startCachingFixture({ frozenClock: true });
  });
  after(() => f.close());

  cases.forEach((c, i) => {
    const run = async (): Promise<void> => {
      const path = `/freshness/${i}`;
      // The origin's fields are fixed at the first request: the resource does not change.
      const fields = c.headers(f.svc.clock.now());
      f.on(path, (request) => {
        // A conditional request gets a 304 so a revalidation is visible as such.
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
    };
    if (c.requirement) requirement(c.requirement, run, c.name);
    else test(`svc: ${c.name}`, run);
  });

  requirement(R.noLocalTimeZone, async () => {
    // The process runs 14 hours ahead of UTC for this test; local time would move Expires by as much.
    const zone = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati';
    try {
      assert.equal(new Date().getTimezoneOffset(), -14 * 60, 'the zone took effect');
      const expires = httpDate(f.svc.clock.now() + 60_000);
      await exchange(f, '/freshness/zone', { headers: { expires, 'last-modified': httpDate(f.svc.clock.now() - 100 * DAY_MS) }, body: 'zoned' }, [
        { xCache: 'MISS' },
        { advanceMs: 30_000, xCache: 'HIT' },
      ]);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});

describe('RFC 9111 §4.2.3 and §5.1 Age through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    // Exact Age values: real time must not carry an apparent age over a whole second.
    f = await startCachingFixture({ frozenClock: true });
  });
  after(() => f.close());

  test('svc: an upstream Age is carried, grows on hits, and counts against max-age', async () => {
    await exchange(f, '/age/upstream', { headers: { 'cache-control': 'max-age=150', age: '100' }, body: 'aged' }, [
      { xCache: 'MISS', fields: { age: '100' } },
      { advanceMs: 40_000, xCache: 'HIT', fields: { age: '140' } },
      // 160 s old with max-age=150 is stale.
      { advanceMs: 20_000, xCache: 'MISS', originRequests: 2 },
    ]);
  });

  test('svc: a Date in the past gives an apparent age (corrected_initial_age)', async () => {
    await exchange(f, '/age/apparent', () => ({ headers: { 'cache-control': 'max-age=60', date: httpDate(f.svc.clock.now() - 30_000) }, body: 'late' }), [
      { fields: { age: '30' } },
      { advanceMs: 25_000, xCache: 'HIT' },
      { advanceMs: 10_000, xCache: 'MISS' },
    ]);
  });

  requirement(R.ageFromRequestTime, async () => {
    // The origin takes 5 s to answer with Age: 10 and a Date of when it answered: the response was
    // already 15 s old when it arrived (corrected_age_value = age_value + response_delay).
    await exchange(
      f,
      '/age/delay',
      () => {
        f.svc.clock.advance(5_000);
        return { headers: { 'cache-control': 'max-age=20', age: '10' }, body: 'slow' };
      },
      [
        { xCache: 'MISS', fields: { age: '15' } },
        { advanceMs: 4_000, xCache: 'HIT', fields: { age: '19' } },
        { advanceMs: 2_000, xCache: 'MISS', originRequests: 2 },
      ],
    );
  });

  requirement(R.ageFirstMember, async () => {
    await exchange(f, '/age/lines', { headers: { 'cache-control': 'max-age=60', age: ['10', '20'] }, body: 'two lines' }, [{ xCache: 'MISS', fields: { age: '10' } }]);
    await exchange(f, '/age/list', { headers: { 'cache-control': 'max-age=60', age: '10, 20' }, body: 'one list' }, [
      { xCache: 'MISS', fields: { age: '10' } },
      { advanceMs: 45_000, xCache: 'HIT', fields: { age: '55' } },
    ]);
  });

  requirement(R.ageInvalidIgnored, async () => {
    await exchange(f, '/age/invalid', { headers: { 'cache-control': 'max-age=60', age: 'old' }, body: 'invalid age' }, [
      { xCache: 'MISS', fields: { age: '0' } },
      { advanceMs: 59_000, xCache: 'HIT', fields: { age: '59' } },
    ]);
  });

  test('svc: Age grows by the time spent in svc on every hit', async () => {
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

describe('RFC 9111 §4.2.4 serving stale through svc', { timeout: 60_000 }, () => {
  /** Runs `body` with a fixture of its own, closed afterwards. */
  async function withFixture(options: FixtureOptions, body: (f: CachingFixture) => Promise<void>): Promise<void> {
    const f = await startCachingFixture({ responseTimeout: '300ms', ...options });
    try {
      await body(f);
    } finally {
      await f.close();
    }
  }

  const forbidding: [string, Record<string, string>, number][] = [
    ['no-cache', { 'cache-control': 'no-cache, max-age=600', etag: '"n"' }, 502],
    ['must-revalidate', { 'cache-control': 'max-age=10, must-revalidate', etag: '"m"' }, 504],
    ['proxy-revalidate', { 'cache-control': 'max-age=10, proxy-revalidate', etag: '"p"' }, 504],
    ['s-maxage', { 'cache-control': 's-maxage=10', etag: '"s"' }, 504],
  ];
  for (const [directive, headers, status] of forbidding) {
    requirement(
      R.staleNotWhenForbidden,
      () =>
        withFixture({}, async (f) => {
          // stale_if_unreachable (5 minutes by default) would serve it; the directive forbids it.
          await exchange(f, '/forbidden', { headers, body: 'must not be served stale' }, [{ xCache: 'MISS' }]);
          await f.origin.close();
          await exchange(f, '/forbidden', undefined, [{ advanceMs: 20_000, status }]);
        }),
      `${directive}, origin unreachable: ${status}, not the stored response`,
    );
  }

  requirement(
    R.staleOnlyWhenAllowed,
    () =>
      withFixture({}, async (f) => {
        await exchange(
          f,
          '/answered',
          (_request, count) => (count === 0 ? { headers: { 'cache-control': 'max-age=10', etag: '"a"' }, body: 'stored' } : { status: 500, body: 'origin error' }),
          [{ xCache: 'MISS' }, { advanceMs: 20_000, status: 500, answerBody: 'origin error', xCache: 'MISS' }],
        );
      }),
    'an origin that answers 500 is not replaced by the stale response without a stale-if-error',
  );

  requirement(
    R.staleOnlyWhenAllowed,
    () =>
      withFixture({}, async (f) => {
        await exchange(f, '/unreachable', { headers: { 'cache-control': 'max-age=10', etag: '"u"' }, body: 'stored' }, [{ xCache: 'MISS' }]);
        await f.origin.close();
        // Disconnected: within stale_if_unreachable (5 minutes by default) past expiry, the stored response stands in.
        await exchange(f, '/unreachable', undefined, [
          { advanceMs: 20_000, status: 200, answerBody: 'stored', xCache: 'STALE' },
          { advanceMs: 280_000, status: 200, answerBody: 'stored', xCache: 'STALE' },
          { advanceMs: 10_000, status: 502 },
        ]);
      }),
    'an unreachable origin: stale within the default stale_if_unreachable, an error beyond it',
  );

  requirement(
    R.staleOnlyWhenAllowed,
    () =>
      withFixture({ responseTimeout: '300ms' }, async (f) => {
        await exchange(f, '/timeout', (_request, count) => (count === 0 ? { headers: { 'cache-control': 'max-age=10' }, body: 'stored' } : { hang: true }), [
          { xCache: 'MISS' },
          { advanceMs: 20_000, status: 200, answerBody: 'stored', xCache: 'STALE' },
        ]);
      }),
    'an origin that does not answer in time is disconnected too',
  );

  test('svc: stale_if_unreachable: 0 turns the default off', () =>
    withFixture({ config: { stale_if_unreachable: 0 } }, async (f) => {
      await exchange(f, '/off', { headers: { 'cache-control': 'max-age=10' }, body: 'stored' }, [{ xCache: 'MISS' }]);
      await f.origin.close();
      await exchange(f, '/off', undefined, [{ advanceMs: 20_000, status: 502, xCache: 'MISS' }]);
    }));

  test("svc: a route's cache.stale_if_error replaces stale_if_unreachable for that route", () =>
    withFixture({ routeCache: { stale_if_error: '30s' } }, async (f) => {
      await exchange(f, '/route', { headers: { 'cache-control': 'max-age=10' }, body: 'stored' }, [{ xCache: 'MISS' }]);
      await f.origin.close();
      await exchange(f, '/route', undefined, [
        { advanceMs: 35_000, status: 200, xCache: 'STALE' },
        { advanceMs: 10_000, status: 502 },
      ]);
    }));

  test("svc: the origin's own longer stale-if-error still applies when it is unreachable", () =>
    withFixture({}, async (f) => {
      await exchange(f, '/longer', { headers: { 'cache-control': 'max-age=10, stale-if-error=3600' }, body: 'stored' }, [{ xCache: 'MISS' }]);
      await f.origin.close();
      await exchange(f, '/longer', undefined, [{ advanceMs: 1_800_000, status: 200, xCache: 'STALE' }]);
    }));
});
