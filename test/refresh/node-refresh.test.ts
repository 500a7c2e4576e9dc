// Background refresh end to end: a real svc node, a real origin, real HTTP clients. The node's
// clock is moved by hand; after each move the test runs what came due (the node's timer would, within
// a second) and waits for the refreshes to end. Objects are served with max-age=100, so a refresh is
// due at 90 s and the object would expire at 100 s.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { startTestOrigin, type OriginReply, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest, type SvcOptions } from '../support/svc-harness.js';
import { fetchRaw, header } from '../support/http.js';
import { sendRaw } from '../support/raw-http.js';
import { SKIP_REASONS } from '../../src/refresh/refresh-metrics.js';
import { exposedValue } from './support/metric-values.js';

const ROUTE = 'main';
const PAST_DUE_MS = 91_000;

/** An origin serving every path with ETag `"<path>"` and max-age=100, answering 304 to that ETag. */
function objectOrigin(svc: () => SvcUnderTest, special: (request: IncomingMessage) => OriginReply | undefined = () => undefined) {
  return (request: IncomingMessage): OriginReply => {
    const date = new Date(svc().clock.now()).toUTCString();
    const chosen = special(request);
    if (chosen) return { ...chosen, headers: { date, ...chosen.headers } };
    const path = request.url ?? '/';
    const headers = { date, etag: `"${path}"`, 'cache-control': 'max-age=100' };
    if (request.method === 'GET' && request.headers['if-none-match'] === `"${path}"`) return { status: 304, headers };
    return { headers: { ...headers, 'content-type': 'text/plain' }, body: `body of ${path}` };
  };
}

function refreshConfig(extra: Record<string, unknown> = {}): SvcOptions {
  return {
    config: {
      routes: [{ name: ROUTE, match: { path_prefix: '/' }, pool: 'origin', refresh_before_expiry: true, refresh_min_hits: 2 }],
      ...extra,
    },
  };
}

async function startWithOrigin(options: SvcOptions, special?: (request: IncomingMessage) => OriginReply | undefined): Promise<{ svc: SvcUnderTest; origin: TestOrigin }> {
  // The origin dates its answers with the node's clock, and the node needs the origin's URL first.
  const started: { svc?: SvcUnderTest } = {};
  const origin = await startTestOrigin(objectOrigin(() => started.svc!, special));
  const svc = await startSvc([origin.url], options);
  started.svc = svc;
  return { svc, origin };
}

/** Moves the node's clock, runs what came due and waits for the refreshes it started. */
async function moveClock(svc: SvcUnderTest, ms: number): Promise<void> {
  await svc.node.gatherHits();
  svc.clock.advance(ms);
  svc.node.refresher!.runDue();
  await svc.node.refresher!.settled();
}

async function metrics(svc: SvcUnderTest): Promise<string> {
  return (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
}

function conditional(origin: TestOrigin, path: string): number {
  return origin.requests.filter((request) => request.url === path && request.headers['if-none-match'] !== undefined).length;
}

describe('background refresh through a node', () => {
  test('a popular entry stays fresh across its expiry: the origin sees conditional refreshes, clients only HIT', async () => {
    const { svc, origin } = await startWithOrigin(refreshConfig());
    try {
      const url = `${svc.dataUrl}/popular`;
      const seen: string[] = [];
      const get = async (): Promise<void> => {
        const answer = await fetchRaw(url);
        assert.equal(answer.body, 'body of /popular');
        seen.push(header(answer, 'x-cache') ?? '');
      };
      await get();
      await get();
      await get();
      for (let cycle = 1; cycle <= 2; cycle++) {
        await moveClock(svc, PAST_DUE_MS);
        assert.equal(conditional(origin, '/popular'), cycle, `refreshed in lifetime ${cycle}`);
        await get();
        await get();
      }
      // 273 s after the object was stored with max-age=100.
      svc.clock.advance(PAST_DUE_MS);
      const last = await fetchRaw(url);
      seen.push(header(last, 'x-cache') ?? '');
      assert.ok(Number(header(last, 'age')) < 100, `Age ${header(last, 'age')} is within the renewed lifetime`);
      assert.deepEqual(seen, ['MISS', 'HIT', 'HIT', 'HIT', 'HIT', 'HIT', 'HIT', 'HIT']);
      assert.equal(origin.requests.filter((request) => request.url === '/popular').length, 3, 'one fill and two refreshes');
      const text = await metrics(svc);
      assert.equal(exposedValue(text, 'svc_refresh_total', { route: ROUTE, result: '304' }), 2);
      assert.equal(exposedValue(text, 'svc_refresh_registry_size', { route: ROUTE }), 1);
      assert.equal(exposedValue(text, 'svc_refresh_scheduled', { route: ROUTE }), 1);
      assert.equal(exposedValue(text, 'svc_refresh_in_flight', { route: ROUTE }), 0);
    } finally {
      await svc.stop();
      await origin.close();
    }
  });

  test('an unpopular entry is not refreshed (below_min_hits) and is revalidated by the request after its expiry', async () => {
    const { svc, origin } = await startWithOrigin(refreshConfig());
    try {
      const url = `${svc.dataUrl}/rare`;
      assert.equal(header(await fetchRaw(url), 'x-cache'), 'MISS');
      assert.equal(header(await fetchRaw(url), 'x-cache'), 'HIT');
      await moveClock(svc, PAST_DUE_MS);
      assert.equal(conditional(origin, '/rare'), 0);
      assert.equal(exposedValue(await metrics(svc), 'svc_refresh_skips_total', { route: ROUTE, reason: 'below_min_hits' }), 1);
      svc.clock.advance(10_000);
      assert.equal(header(await fetchRaw(url), 'x-cache'), 'REVALIDATED');
    } finally {
      await svc.stop();
      await origin.close();
    }
  });

  test('skip reasons are counted: not_found, stale, negative, semaphore_full, below_min_hits; bad_url is exposed', async () => {
    const { svc, origin } = await startWithOrigin(refreshConfig(), (request): OriginReply | undefined => {
      if (request.url === '/missing') return { status: 404, headers: { 'cache-control': 'max-age=100' }, body: 'no such page' };
      // Slow refreshes, so that nine refreshes due at once overflow the eight permits.
      if (request.url?.startsWith('/slow') && request.headers['if-none-match'] !== undefined) {
        return { status: 304, headers: { etag: `"${request.url}"`, 'cache-control': 'max-age=100' }, delayMs: 50 };
      }
      return undefined;
    });
    try {
      const popular = async (path: string): Promise<void> => {
        for (let i = 0; i < 3; i++) await fetchRaw(`${svc.dataUrl}${path}`);
      };
      const admin = (operation: 'purge' | 'refresh', path: string) =>
        fetchRaw(`${svc.adminUrl}/v1/${operation}`, {
          method: 'POST',
          headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${svc.dataUrl}${path}` }),
        });
      await popular('/gone');
      assert.equal((await admin('purge', '/gone')).status, 200);
      await popular('/soft');
      assert.equal((await admin('refresh', '/soft')).status, 200, 'a soft purge marks the entry stale');
      await popular('/missing');
      // A request without Host is refused at the edge (issue 14), so it is never registered: every
      // request the refresher sees has a validated authority, and bad_url is left to registries
      // persisted before that.
      assert.equal((await sendRaw(svc.dataUrl, 'GET /nohost HTTP/1.1\r\n\r\n', { untilResponse: true })).status, 400);
      for (let i = 0; i < 9; i++) await popular(`/slow${i}`);
      await fetchRaw(`${svc.dataUrl}/rare`);
      await fetchRaw(`${svc.dataUrl}/rare`);

      await moveClock(svc, PAST_DUE_MS);
      const text = await metrics(svc);
      const skips = (reason: string): number | undefined => exposedValue(text, 'svc_refresh_skips_total', { route: ROUTE, reason });
      assert.equal(skips('not_found'), 1);
      assert.equal(skips('stale'), 1);
      assert.equal(skips('negative'), 1);
      assert.equal(skips('bad_url'), 0);
      assert.equal(skips('semaphore_full'), 1);
      assert.equal(skips('below_min_hits'), 1);
      for (const reason of SKIP_REASONS) assert.notEqual(skips(reason), undefined, `${reason} is exposed`);
      assert.equal(exposedValue(text, 'svc_refresh_total', { route: ROUTE, result: '304' }), 8);
      for (const path of ['/gone', '/soft', '/missing', '/nohost', '/rare']) assert.equal(conditional(origin, path), 0, path);

      // The ninth slow entry is retried once the semaphore has room.
      await moveClock(svc, 500);
      assert.equal(exposedValue(await metrics(svc), 'svc_refresh_total', { route: ROUTE, result: '304' }), 9);
    } finally {
      await svc.stop();
      await origin.close();
    }
  });

  test('with a warm tier, what is popular survives a restart and is refreshed without new hits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-refresh-node-'));
    const options = { ...refreshConfig({ warm: { path: join(dir, 'warm'), max_bytes: 10_000_000 } }), dir };
    try {
      const first = await startWithOrigin(options);
      // The restarted node listens on another port: requests keep the first one's Host, and so its key.
      const host = new URL(first.svc.dataUrl).host;
      try {
        for (let i = 0; i < 3; i++) await fetchRaw(`${first.svc.dataUrl}/kept`);
      } finally {
        await first.svc.stop();
      }
      assert.equal(exposedValue(await first.svc.node.metrics.registry.metrics(), 'svc_refresh_total', { route: ROUTE, result: 'persist_cycle' }), 1);
      await first.origin.close();

      const second = await startWithOrigin(options);
      try {
        const text = await metrics(second.svc);
        assert.equal(exposedValue(text, 'svc_refresh_registry_size', { route: ROUTE }), 1);
        assert.equal(exposedValue(text, 'svc_refresh_scheduled', { route: ROUTE }), 1);
        await moveClock(second.svc, PAST_DUE_MS);
        assert.equal(conditional(second.origin, '/kept'), 1);
        assert.equal(header(await fetchRaw(`${second.svc.dataUrl}/kept`, { headers: { host } }), 'x-cache'), 'HIT');
      } finally {
        await second.svc.stop();
        await second.origin.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a node without refresh_before_expiry has no refresher and no refresh metrics', async () => {
    const { svc, origin } = await startWithOrigin({});
    try {
      assert.equal(svc.node.refresher, undefined);
      assert.doesNotMatch(await metrics(svc), /svc_refresh_/);
    } finally {
      await svc.stop();
      await origin.close();
    }
  });
});
