// The background refresher against real parts: a real TieredCache over a real hot store (and a real
// warm store for persistence), a real origin reached through a real upstream pool, and a clock and
// timers moved by hand. Entries are filled with max-age=100, so a refresh is due 90 s after storing.
import { entryFields } from '../../src/cache/entry.js';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { decideReuse } from '../../src/cache/policy/reuse.js';
import { NO_REQUEST_DIRECTIVES } from '../../src/cache/policy/request-directives.js';
import { createLogger } from '../../src/observe/logger.js';
import { BackgroundRefresher } from '../../src/refresh/background-refresher.js';
import { SKIP_REASONS } from '../../src/refresh/refresh-metrics.js';
import { RefreshOptionError } from '../../src/refresh/errors.js';
import { REGISTRY_FILE_NAME, readRegistryFile } from '../../src/refresh/registry-file.js';
import { clientRequest, HOST, httpKey, ROUTE, startObjectOrigin, startRig, type OriginObject, type Rig, type RigOptions } from './support/refresh-rig.js';
import { ManualTime } from './support/manual-time.js';

const DUE_MS = 90_000;

async function withRig(options: RigOptions, body: (rig: Rig) => Promise<void>): Promise<void> {
  const rig = await startRig(options);
  try {
    await body(rig);
  } finally {
    await rig.close();
  }
}

/** Fills `path` from the origin object given and serves it `hits` times. */
function popular(rig: Rig, path: string, hits = 2, etag = '"v1"'): void {
  rig.objects.set(path, { body: `${path} v1`, etag });
  const entry = rig.fill(path);
  for (let i = 0; i < hits; i++) rig.serve(entry);
}

function isFresh(rig: Rig, path: string): boolean {
  const entry = rig.stored(path);
  return entry !== undefined && decideReuse(NO_REQUEST_DIRECTIVES, entry, rig.time.now()).action === 'fresh';
}

describe('background refresh of a popular entry', () => {
  test('is a conditional request at 90% of the lifetime; a 304 renews the entry and keeps its body', () =>
    withRig({}, async (rig) => {
      popular(rig, '/logo');
      await rig.advance(DUE_MS - 1_000);
      assert.equal(rig.origin.requests.length, 0, 'nothing is refreshed before it is due');
      assert.equal(await rig.value('svc_refresh_scheduled'), 1);
      await rig.advance(1_000);
      assert.equal(rig.conditionalRequests('/logo'), 1);
      assert.equal(rig.origin.requests[0]!.headers['if-none-match'], '"v1"');
      assert.equal(rig.origin.requests[0]!.headers.host, HOST);
      const renewed = rig.stored('/logo');
      assert.equal(renewed?.body.toString(), '/logo v1');
      assert.equal(renewed?.responseTimeMs, rig.time.now(), 'freshness counts from the 304');
      assert.equal(await rig.value('svc_refresh_total', { result: '304' }), 1);
      await rig.advance(20_000);
      assert.ok(isFresh(rig, '/logo'), 'still fresh 110 s after it was stored with max-age=100');
    }));

  test('a 200 replaces the entry with the new representation', () =>
    withRig({}, async (rig) => {
      popular(rig, '/price');
      rig.objects.set('/price', { body: '/price v2', etag: '"v2"' });
      await rig.advance(DUE_MS);
      assert.equal(rig.stored('/price')?.body.toString(), '/price v2');
      assert.equal(rig.stored('/price')?.etag, '"v2"');
      assert.equal(await rig.value('svc_refresh_total', { result: '200' }), 1);
    }));

  test('keeps an entry fresh lifetime after lifetime while it keeps its hits', () =>
    withRig({}, async (rig) => {
      popular(rig, '/hot');
      for (let cycle = 1; cycle <= 3; cycle++) {
        await rig.advance(DUE_MS);
        assert.equal(rig.conditionalRequests('/hot'), cycle);
        const entry = rig.stored('/hot')!;
        rig.serve(entry);
        rig.serve(entry);
      }
      assert.ok(isFresh(rig, '/hot'));
      assert.equal(await rig.value('svc_refresh_total', { result: '304' }), 3);
    }));

  test('hits count per lifetime: a renewed entry nobody asks for again is not refreshed again', () =>
    withRig({}, async (rig) => {
      popular(rig, '/once');
      await rig.advance(DUE_MS);
      await rig.advance(DUE_MS);
      assert.equal(rig.conditionalRequests('/once'), 1);
      assert.equal(await rig.skips('below_min_hits'), 1);
    }));

  test('the variant a request selected is refetched with the request fields its Vary names', () =>
    withRig({}, async (rig) => {
      rig.objects.set('/v', { body: 'gz', etag: '"g"', vary: 'Accept-Encoding' });
      const fields = ['Accept-Encoding', 'gzip', 'Cookie', 'session=secret'];
      const entry = rig.fill('/v', fields);
      assert.deepEqual(entry.varyNames, ['accept-encoding']);
      rig.serve(entry, fields);
      rig.serve(entry, fields);
      await rig.advance(DUE_MS);
      const sent = rig.origin.requests.at(-1)!;
      assert.equal(sent.headers['accept-encoding'], 'gzip');
      assert.equal(sent.headers.cookie, undefined, 'fields the response did not vary on are not kept');
      assert.equal(rig.stored('/v', entry.variantKey)?.responseTimeMs, rig.time.now());
      assert.equal(await rig.value('svc_refresh_total', { result: '304' }), 1);
    }));
});

describe('refresh errors leave the entry to the request path', () => {
  const cases: {
    name: string;
    errorType: string;
    change: (rig: Rig) => void | Promise<void>;
    /** The entry is deleted rather than left. */
    deleted?: boolean;
  }[] = [
    { name: 'an origin 5xx', errorType: 'unexpected_status', change: (rig) => void (rig.objects.get('/e')!.reply = { status: 503, body: 'down' }) },
    { name: 'a refused connection', errorType: 'upstream_refused', change: (rig) => rig.origin.close() },
    {
      name: 'a 304 that describes another response',
      errorType: 'unmatched_304',
      change: (rig) => void (rig.objects.get('/e')!.reply = { status: 304, headers: { etag: '"other"', date: rig.time.httpDate() } }),
    },
    {
      name: 'a 200 that may not be stored',
      errorType: 'not_storable',
      change: (rig) => void rig.objects.set('/e', { body: 'private', etag: '"v2"', cacheControl: 'no-store' }),
    },
    {
      name: 'a 304 that makes the entry unstorable',
      errorType: 'not_storable',
      change: (rig) => void (rig.objects.get('/e')!.cacheControl = 'no-store'),
      deleted: true,
    },
    {
      name: 'a body over max_object_bytes',
      errorType: 'too_large',
      change: (rig) => void rig.objects.set('/e', { body: 'x'.repeat(100_001), etag: '"big"' }),
    },
    {
      name: 'a body cut short',
      errorType: 'body_incomplete',
      change: (rig) =>
        void (rig.objects.get('/e')!.reply = {
          headers: { etag: '"v3"', 'cache-control': 'max-age=100', date: rig.time.httpDate() },
          body: 'abcdefgh',
          cutAfterBytes: 3,
        }),
    },
  ];
  for (const { name, errorType, change, deleted } of cases) {
    test(`${name}: error_type ${errorType}`, () =>
      withRig({}, async (rig) => {
        popular(rig, '/e');
        const before = rig.stored('/e')!;
        await change(rig);
        await rig.advance(DUE_MS);
        assert.equal(await rig.value('svc_refresh_total', { result: 'error' }), 1);
        assert.equal(await rig.value('svc_refresh_errors_total', { error_type: errorType }), 1);
        if (deleted) assert.equal(rig.stored('/e'), undefined);
        else assert.equal(rig.stored('/e')?.responseTimeMs, before.responseTimeMs, 'the entry is left as it was');
        await rig.advance(1_000);
        assert.equal(await rig.value('svc_refresh_total', { result: 'error' }), 1, 'not retried in the same lifetime');
      }));
  }

  test('an entry purged while its refresh is in flight is not brought back: superseded', () =>
    withRig({}, async (rig) => {
      popular(rig, '/p');
      rig.objects.get('/p')!.reply = { status: 304, headers: { etag: '"v1"', date: rig.time.httpDate() }, delayMs: 100 };
      rig.time.advance(DUE_MS);
      assert.equal(await rig.value('svc_refresh_in_flight'), 1);
      rig.cache.delete(httpKey(HOST, '/p'));
      await rig.refresher.settled();
      assert.equal(rig.stored('/p'), undefined);
      assert.equal(await rig.value('svc_refresh_errors_total', { error_type: 'superseded' }), 1);
      assert.equal(await rig.value('svc_refresh_in_flight'), 0);
    }));
});

describe('every skip reason', () => {
  test('below_min_hits: an entry hit once is not refreshed; a second hit after the due time refreshes it at once', () =>
    withRig({}, async (rig) => {
      popular(rig, '/rare', 1);
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('below_min_hits'), 1);
      assert.equal(rig.origin.requests.length, 0);
      rig.serve(rig.stored('/rare')!);
      await rig.advance(0);
      assert.equal(rig.conditionalRequests('/rare'), 1);
      assert.equal(await rig.value('svc_refresh_total', { result: '304' }), 1);
    }));

  test('not_found: the entry was purged before its refresh came due', () =>
    withRig({}, async (rig) => {
      popular(rig, '/gone');
      rig.cache.delete(httpKey(HOST, '/gone'));
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('not_found'), 1);
      assert.equal(rig.origin.requests.length, 0);
    }));

  test('not_found: a ban hides the entry (the lazy check the proxy applies)', () =>
    withRig({ refresher: { isInvalidated: (entry) => entry.key.endsWith('/banned') } }, async (rig) => {
      popular(rig, '/banned');
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('not_found'), 1);
      assert.equal(rig.origin.requests.length, 0);
    }));

  test('stale: the entry was soft-purged (refresh) before its refresh came due', () =>
    withRig({}, async (rig) => {
      popular(rig, '/soft');
      rig.cache.rewriteVariants(httpKey(HOST, '/soft'), (entry) => ({ ...entryFields(entry), forcedStale: true }));
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('stale'), 1);
      assert.equal(rig.origin.requests.length, 0);
    }));

  test('stale: the clock passed the expiry before the refresh ran', () =>
    withRig({}, async (rig) => {
      popular(rig, '/late');
      // The process was suspended past the expiry (at 100 s), so the refresh due at 90 s runs late.
      rig.time.jump(101_000);
      await rig.advance(0);
      assert.equal(await rig.skips('stale'), 1);
      assert.equal(rig.origin.requests.length, 0);
    }));

  test('negative: a stored 404 is not refreshed', () =>
    withRig({}, async (rig) => {
      // The origin answers 404 with max-age=100: svc stores it (RFC 9111 §4.2.2 lists 404).
      rig.objects.set('/missing', { body: 'nope', etag: '"n"', status: 404 });
      const entry = rig.fill('/missing');
      assert.equal(entry.status, 404);
      rig.serve(entry);
      rig.serve(entry);
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('negative'), 1);
      assert.equal(rig.origin.requests.length, 0);
    }));

  test('bad_url: a request without Host cannot be refetched', () =>
    withRig({}, async (rig) => {
      rig.objects.set('/nohost', { body: 'x', etag: '"x"' });
      const entry = rig.fill('/nohost');
      const request = clientRequest('/nohost', '');
      rig.refresher.onServedFromCache(entry, request, rig.route);
      rig.refresher.onServedFromCache(entry, request, rig.route);
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('bad_url'), 1);
      assert.equal(rig.origin.requests.length, 0);
    }));

  test('semaphore_full: refreshes beyond the concurrency wait and are retried', () =>
    withRig({ refresher: { concurrency: 1 } }, async (rig) => {
      popular(rig, '/s1');
      popular(rig, '/s2');
      for (const path of ['/s1', '/s2']) rig.objects.get(path)!.reply = { status: 304, headers: { etag: '"v1"', date: rig.time.httpDate() }, delayMs: 30 };
      rig.time.advance(DUE_MS);
      assert.equal(await rig.skips('semaphore_full'), 1);
      assert.equal(await rig.value('svc_refresh_in_flight'), 1);
      await rig.refresher.settled();
      await rig.advance(500);
      assert.equal(rig.conditionalRequests('/s1') + rig.conditionalRequests('/s2'), 2, 'retried once the semaphore had room');
      assert.equal(await rig.value('svc_refresh_total', { result: '304' }), 2);
    }));

  test('rate_limited: refreshes beyond the token bucket wait and are retried', () =>
    withRig({ refresher: { ratePerSecond: 1, burst: 1 } }, async (rig) => {
      popular(rig, '/r1');
      popular(rig, '/r2');
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('rate_limited'), 1);
      assert.equal(rig.origin.requests.length, 1);
      await rig.advance(500);
      assert.equal(await rig.skips('rate_limited'), 2, 'half a second gives half a token');
      await rig.advance(500);
      assert.equal(rig.origin.requests.length, 2);
      assert.equal(await rig.value('svc_refresh_total', { result: '304' }), 2);
    }));

  test('rate_limited past the expiry: no retry, the request path revalidates', () =>
    withRig({ refresher: { ratePerSecond: 0.01, burst: 1 } }, async (rig) => {
      popular(rig, '/q1');
      popular(rig, '/q2');
      await rig.advance(DUE_MS);
      await rig.advance(20_000);
      const skips = (await rig.skips('rate_limited')) ?? 0;
      // Retries every 500 ms until the expiry at 100 s: 10 s / 0.5 s = 20 attempts, then none.
      assert.equal(skips, 20);
      assert.equal(rig.origin.requests.length, 1);
      assert.equal(await rig.value('svc_refresh_scheduled'), 1, 'only the refreshed entry waits for its next lifetime');
    }));

  test('not_registered: the registry evicted the record before its refresh came due', () =>
    withRig({ refresher: { maxRecords: 1 } }, async (rig) => {
      popular(rig, '/first');
      rig.time.advance(1_000);
      popular(rig, '/second');
      assert.equal(await rig.value('svc_refresh_registry_size'), 1);
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('not_registered'), 1);
      assert.equal(rig.conditionalRequests('/first'), 0);
      assert.equal(rig.conditionalRequests('/second'), 1);
    }));

  test('not_registered: under a scan of distinct URLs the queue is compacted and evicted records are skipped', () =>
    withRig({ refresher: { maxRecords: 1 } }, async (rig) => {
      // Each new URL evicts the previous record, whose refresh stays queued: 70 slots for a bound of 1.
      for (let i = 0; i < 70; i++) popular(rig, `/scan${i}`, 1);
      assert.equal(await rig.value('svc_refresh_scheduled'), 70);
      rig.refresher.runDue();
      assert.equal(await rig.skips('not_registered'), 69);
      assert.equal(await rig.value('svc_refresh_scheduled'), 1);
      assert.equal(await rig.value('svc_refresh_registry_size'), 1);
      await rig.advance(DUE_MS);
      assert.equal(await rig.skips('not_registered'), 69, 'each skipped once');
      assert.equal(await rig.skips('below_min_hits'), 1, 'the one still registered comes due as usual');
    }));

  test('every reason is a series from the start, at 0', () =>
    withRig({}, async (rig) => {
      for (const reason of SKIP_REASONS) assert.equal(await rig.skips(reason), 0, reason);
      for (const result of ['304', '200', 'error', 'persist_cycle']) assert.equal(await rig.value('svc_refresh_total', { result }), 0);
    }));
});

describe('registry persistence', () => {
  test('what is popular survives a restart with the warm tier, and is refreshed without new hits', async () => {
    const time = new ManualTime();
    const objects = new Map<string, OriginObject>();
    const origin = await startObjectOrigin(objects, time);
    const dir = await mkdtemp(join(tmpdir(), 'svc-refresh-'));
    const shared = { warm: true, dir, origin, objects, time };
    try {
      const first = await startRig(shared);
      try {
        popular(first, '/kept', 3);
        first.time.advance(60_000);
        // The persist timer fired at 60 s; persist() joins the write it started.
        await first.refresher.persist();
        assert.equal(await first.value('svc_refresh_total', { result: 'persist_cycle' }), 1);
        const file = await readRegistryFile(join(dir, 'refresh'));
        assert.equal(file.status === 'read' && file.records[0]?.hits, 3);
      } finally {
        await first.close();
      }
      const second = await startRig(shared);
      try {
        assert.equal(await second.value('svc_refresh_registry_size'), 1);
        assert.equal(await second.value('svc_refresh_scheduled'), 1);
        await second.advance(DUE_MS - 60_000);
        assert.equal(second.conditionalRequests('/kept'), 1);
        assert.equal(await second.value('svc_refresh_total', { result: '304' }), 1);
      } finally {
        await second.close();
      }
    } finally {
      await origin.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('stop writes the registry a last time', () =>
    withRig({ warm: true }, async (rig) => {
      popular(rig, '/last');
      await rig.refresher.stop();
      assert.equal(await rig.value('svc_refresh_total', { result: 'persist_cycle' }), 1);
      const file = await readRegistryFile(join(rig.dir, 'refresh'));
      assert.equal(file.status === 'read' && file.records.length, 1);
    }));

  test('an unreadable registry file is ignored with a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-refresh-'));
    try {
      await mkdir(join(dir, 'refresh'), { recursive: true });
      await writeFile(join(dir, 'refresh', REGISTRY_FILE_NAME), '{"version":1,"records":[{"key":');
      await withRig({ warm: true, dir }, async (rig) => {
        assert.equal(await rig.value('svc_refresh_registry_size'), 0);
        assert.ok(rig.logs.lines.some((line) => line.msg === 'refresh registry file ignored'));
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a registry write that fails is counted as persist_failed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-refresh-'));
    try {
      // A directory cannot be created under a regular file.
      await writeFile(join(dir, 'file'), 'x');
      await withRig({ refresher: { persistDirectory: join(dir, 'file', 'refresh') } }, async (rig) => {
        await rig.refresher.persist();
        assert.equal(await rig.value('svc_refresh_errors_total', { error_type: 'persist_failed' }), 1);
        assert.equal(await rig.value('svc_refresh_total', { result: 'persist_cycle' }), 0);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('lifecycle', () => {
  test('stop cancels every timer and aborts the refreshes in flight', () =>
    withRig({}, async (rig) => {
      popular(rig, '/slow');
      rig.objects.get('/slow')!.reply = { hang: true };
      rig.time.advance(DUE_MS);
      assert.equal(await rig.value('svc_refresh_in_flight'), 1);
      popular(rig, '/later');
      assert.ok(rig.time.pendingTimers > 0);
      await rig.refresher.stop();
      assert.equal(rig.time.pendingTimers, 0);
      assert.equal(await rig.value('svc_refresh_errors_total', { error_type: 'aborted' }), 1);
      const requests = rig.origin.requests.length;
      rig.time.advance(DUE_MS);
      assert.equal(rig.origin.requests.length, requests, 'nothing runs after stop');
    }));

  test('hits on routes without refresh_before_expiry are not registered', () =>
    withRig({}, async (rig) => {
      rig.objects.set('/other', { body: 'o', etag: '"o"' });
      const entry = rig.fill('/other');
      const request = clientRequest('/other', HOST);
      rig.refresher.onServedFromCache(entry, request, { ...rig.route, label: 'not-refreshed' });
      assert.equal(await rig.value('svc_refresh_registry_size'), 0);
      assert.equal(await rig.value('svc_refresh_registry_size', { route: 'not-refreshed' }), undefined);
    }));

  test('options out of range are refused at construction', () =>
    withRig({}, async (rig) => {
      const base = { cache: rig.cache, routes: [rig.route], registry: new Registry(), logger: createLogger({ destination: rig.logs }), fills: rig.fills };
      assert.throws(() => new BackgroundRefresher({ ...base, concurrency: 0 }), RefreshOptionError);
      assert.throws(() => new BackgroundRefresher({ ...base, registry: new Registry(), refreshAtFraction: 1.5 }), RefreshOptionError);
      assert.throws(() => new BackgroundRefresher({ ...base, registry: new Registry(), maxRecords: 0 }), RefreshOptionError);
    }));

  test('the route label is the one the metrics carry', () =>
    withRig({}, async (rig) => {
      popular(rig, '/label');
      assert.equal(await rig.value('svc_refresh_registry_size', { route: ROUTE }), 1);
    }));
});
