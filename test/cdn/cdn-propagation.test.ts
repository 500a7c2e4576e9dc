// Issue 18: invalidations reach the CDN (spec §6.2, §6.3, §7): a node with a fake Cloudflare API on
// 127.0.0.1; what each call carries, batching, retries and their waits, what the admin API answers in
// async and sync mode, GET /v1/cdn/status and the svc_cdn_* metrics.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeCdn, OK, cloudflareError, type FakeCdn, type FakeCdnAnswer, type FakeCdnHandler } from './support/fake-cdn.js';
import { eventually } from '../support/eventually.js';
import { startCdnNode, sample, ZONE, CDN_TOKEN, type CdnNode } from './support/cdn-node.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { fetchRaw } from '../support/http.js';
import { errorCode, errorMessage } from '../api/support/admin-fetch.js';
import { createAdminClient } from '../../src/client/admin-client.js';
import { AdminApiError } from '../../src/client/admin-api-error.js';

const SITE = 'https://shop.example.com';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** Answers in turn, then OK. */
function inTurn(...answers: FakeCdnAnswer[]): FakeCdnHandler {
  return (_call, index) => answers[index] ?? OK;
}

describe('CDN propagation', () => {
  let cdn: FakeCdn;
  const nodes: CdnNode[] = [];

  before(async () => {
    cdn = await startFakeCdn();
  });
  after(async () => {
    for (const node of nodes) await node.stop();
    await cdn.close();
  });

  async function node(options: Parameters<typeof startCdnNode>[1] = {}, handler: FakeCdnHandler = () => OK): Promise<CdnNode> {
    cdn.calls.length = 0;
    cdn.handle(handler);
    const started = await startCdnNode(cdn, options);
    nodes.push(started);
    return started;
  }

  async function settled(target: CdnNode): Promise<void> {
    await eventually('no purge pending', () => target.status(), (status) => status.pending === 0);
  }

  test('async: a purge is answered before the CDN answers, and reaches it as one files call with the bearer token', async () => {
    const held = deferred();
    const target = await node({}, async () => {
      await held.promise;
      return OK;
    });
    const before = await target.status();
    assert.deepEqual(before, { enabled: true, zone_id: ZONE, async: true, last_error: null, last_error_at: null, last_success_at: null, pending: 0 });

    const answer = await target.admin('POST', '/v1/purge', { url: `${SITE}/a` });
    assert.equal(answer.status, 200, 'answered while the CDN call is held');
    await cdn.waitForCalls(1);
    assert.equal((await target.status()).pending, 1, 'the purge is pending until the CDN confirms it');
    held.resolve();
    await settled(target);

    const [call] = cdn.calls;
    assert.equal(call!.method, 'POST');
    assert.equal(call!.path, `/client/v4/zones/${ZONE}/purge_cache`);
    assert.equal(call!.headers.authorization, `Bearer ${CDN_TOKEN}`);
    assert.deepEqual(call!.body, { files: [`${SITE}/a`] });
    const status = await target.status();
    assert.equal(status.last_error, null);
    assert.ok(status.last_success_at !== null && !Number.isNaN(Date.parse(status.last_success_at)), 'last_success_at is a timestamp');
    const metrics = await target.metrics();
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="purge",status="ok"}'), 1);
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="purge",status="error"}'), 0);
    assert.equal(sample(metrics, 'svc_cdn_purge_duration_seconds_count{operation="purge"}'), 1);
    assert.equal(sample(metrics, 'svc_cdn_purge_pending'), 0);
  });

  test('each operation becomes the CDN call of spec §6.2; regex bans are skipped and counted by reason', async () => {
    const target = await node();
    const steps: [string, unknown, unknown][] = [
      ['/v1/purge', { url: `${SITE}/1` }, { files: [`${SITE}/1`] }],
      ['/v1/refresh', { url: `${SITE}/2` }, { files: [`${SITE}/2`] }],
      ['/v1/purge/batch', { urls: [`${SITE}/3`, 'not a url', `${SITE}/4`] }, { files: [`${SITE}/3`, `${SITE}/4`] }],
      ['/v1/ban', { surrogate_key: 'product-1' }, { tags: ['product-1'] }],
      ['/v1/ban', { host_regex: 'shop\\.example\\.com' }, { hosts: ['shop.example.com'] }],
      ['/v1/ban', { host_regex: '^shop.example.com$', path_regex: '^/products/' }, { prefixes: ['shop.example.com/products/'] }],
      ['/v1/ban', { host_regex: 'shop.example.com', path_regex: '\\.css$' }, { hosts: ['shop.example.com'] }],
    ];
    for (const [index, [path, body, expected]] of steps.entries()) {
      assert.equal((await target.admin('POST', path, body)).status, 200, path);
      await cdn.waitForCalls(index + 1);
      assert.deepEqual(cdn.calls[index]!.body, expected, `${path} ${JSON.stringify(body)}`);
    }
    // Neither skipped ban sends anything: the next call is the purge that follows them.
    assert.equal((await target.admin('POST', '/v1/ban', { path_regex: '/products/[0-9]+' })).status, 200);
    assert.equal((await target.admin('POST', '/v1/ban', { host_regex: '.*' })).status, 200);
    assert.equal((await target.admin('POST', '/v1/ban', { path_regex: '/products/' })).status, 200);
    assert.equal((await target.admin('POST', '/v1/purge', { url: `${SITE}/5` })).status, 200);
    await cdn.waitForCalls(steps.length + 1);
    assert.deepEqual(cdn.calls[steps.length]!.body, { files: [`${SITE}/5`] });
    await settled(target);

    const metrics = await target.metrics();
    assert.equal(sample(metrics, 'svc_cdn_purge_skipped_total{reason="regex_metacharacters"}'), 2);
    assert.equal(sample(metrics, 'svc_cdn_purge_skipped_total{reason="path_without_host"}'), 1);
    assert.equal(sample(metrics, 'svc_cdn_purge_skipped_total{reason="queue_full"}'), 0);
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="purge",status="ok"}'), 3);
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="refresh",status="ok"}'), 1);
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="ban",status="ok"}'), 4);
    assert.equal(cdn.calls.length, steps.length + 1);
  });

  test('batching: purges queued while a call is out share the next call; 1,000 URLs make 34 calls of at most 30', async () => {
    const held = deferred();
    const target = await node({}, async (_call, index) => {
      if (index === 0) await held.promise;
      return OK;
    });
    await target.admin('POST', '/v1/purge', { url: `${SITE}/first` });
    await cdn.waitForCalls(1);
    for (let i = 0; i < 5; i++) assert.equal((await target.admin('POST', '/v1/purge', { url: `${SITE}/next-${i}` })).status, 200);
    held.resolve();
    await cdn.waitForCalls(2);
    assert.deepEqual(cdn.calls[1]!.body, { files: [0, 1, 2, 3, 4].map((i) => `${SITE}/next-${i}`) });
    await settled(target);

    const urls = Array.from({ length: 1000 }, (_, i) => `${SITE}/batch/${i}`);
    assert.equal((await target.admin('POST', '/v1/purge/batch', { urls })).status, 200);
    await eventually('the batch to be sent', async () => ({ pending: (await target.status()).pending, calls: cdn.calls.length }), ({ pending, calls }) => pending === 0 && calls >= 36);
    const batchCalls = cdn.calls.slice(2);
    assert.equal(batchCalls.length, 34, 'ceil(1000 / 30) calls');
    const sent = batchCalls.flatMap((call) => call.body.files as string[]);
    assert.ok(batchCalls.every((call) => (call.body.files as string[]).length <= 30));
    assert.deepEqual(sent, urls, 'every URL once, in order');
  });

  test('429 with and without Retry-After and a 5xx are retried after exponential, jittered waits', async () => {
    const target = await node({}, inTurn(cloudflareError(429, 971, 'rate limited', { 'retry-after': '2' }), cloudflareError(429, 971, 'rate limited'), { status: 503 }));
    await target.admin('POST', '/v1/purge', { url: `${SITE}/retried` });
    await cdn.waitForCalls(4);
    await settled(target);
    assert.equal(cdn.calls.length, 4);
    for (const call of cdn.calls) assert.deepEqual(call.body, { files: [`${SITE}/retried`] });
    // Retry-After 2 s plus a quarter of the 1 s back-off; then half and three quarters of 2 s and 4 s (random = 0.5).
    assert.deepEqual(target.timers.retryWaits(), [2250, 1500, 3000]);
    const status = await target.status();
    assert.equal(status.last_error, null, 'the call succeeded in the end');
    const metrics = await target.metrics();
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="purge",status="ok"}'), 1);
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="purge",status="error"}'), 0);
  });

  test('a reset connection and a CDN that hangs are retried as network errors', async () => {
    const target = await node({ timeout: '200ms' }, inTurn('reset', 'hang'));
    await target.admin('POST', '/v1/purge', { url: `${SITE}/network` });
    await cdn.waitForCalls(3);
    await settled(target);
    assert.equal(cdn.calls.length, 3);
    assert.deepEqual(target.timers.retryWaits(), [750, 1500]);
  });

  test('retries run out: the purge stays pending, last_error says why, and it goes out after the cool-down', async () => {
    const target = await node({}, () => cloudflareError(503, 0, 'upstream unavailable'));
    await target.admin('POST', '/v1/purge', { url: `${SITE}/outage` });
    await cdn.waitForCalls(4);
    await eventually('last_error', () => target.status(), (status) => status.last_error !== null);
    let status = await target.status();
    assert.equal(status.pending, 1);
    assert.equal(status.last_error, 'the CDN API answered 503: upstream unavailable (code 0)');
    assert.ok(status.last_error_at !== null);
    assert.equal(status.last_success_at, null);
    assert.equal(cdn.calls.length, 4, 'one call and 3 retries');
    assert.deepEqual(target.timers.coolDowns(), [30_000]);
    let metrics = await target.metrics();
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="purge",status="error"}'), 1);
    assert.equal(sample(metrics, 'svc_cdn_purge_pending'), 1);
    const logged = await target.svc.logs.find('the failure logged', (line) => line.msg === 'CDN purge failed after retries: pending, tried again later');
    assert.equal(logged.level, 'error');
    assert.deepEqual(logged.values, [`${SITE}/outage`]);

    cdn.handle(() => OK);
    target.timers.fireHeld();
    await cdn.waitForCalls(5);
    await settled(target);
    assert.deepEqual(cdn.calls[4]!.body, { files: [`${SITE}/outage`] });
    status = await target.status();
    assert.ok(status.last_success_at !== null);
    assert.equal(status.last_error, 'the CDN API answered 503: upstream unavailable (code 0)', 'last_error stays as a record of the failure');
    metrics = await target.metrics();
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="purge",status="ok"}'), 1);
  });

  test('a Retry-After beyond a minute ends the call at once; the cool-down waits as long as the CDN asked', async () => {
    const target = await node({}, inTurn(cloudflareError(429, 971, 'rate limited', { 'retry-after': '120' })));
    await target.admin('POST', '/v1/purge', { url: `${SITE}/later` });
    await eventually('last_error', () => target.status(), (status) => status.last_error !== null);
    assert.equal(cdn.calls.length, 1);
    assert.deepEqual(target.timers.retryWaits(), []);
    assert.deepEqual(target.timers.coolDowns(), [120_000]);
    target.timers.fireHeld();
    await cdn.waitForCalls(2);
    await settled(target);
  });

  test('another 4xx is not retried: logged at warn, counted as an error, the purge dropped', async () => {
    const target = await node({}, inTurn(cloudflareError(400, 1012, 'bad request')));
    await target.admin('POST', '/v1/ban', { surrogate_key: 'bad' });
    await cdn.waitForCalls(1);
    await eventually('last_error', () => target.status(), (status) => status.last_error !== null);
    await settled(target);
    // The next purge is the next call: nothing retried the refused one in between.
    await target.admin('POST', '/v1/purge', { url: `${SITE}/after` });
    await cdn.waitForCalls(2);
    assert.deepEqual(cdn.calls[1]!.body, { files: [`${SITE}/after`] });
    assert.deepEqual(target.timers.retryWaits(), []);
    assert.equal((await target.status()).last_error, 'the CDN API answered 400: bad request (code 1012)');
    const warned = await target.svc.logs.find('the refusal logged', (line) => line.msg === 'CDN refused a purge: not retried');
    assert.equal(warned.level, 'warn');
    const metrics = await target.metrics();
    assert.equal(sample(metrics, 'svc_cdn_purge_total{operation="ban",status="error"}'), 1);
  });

  test('propagate flags switch single operations off; with all off the status says enabled: false', async () => {
    const target = await node({ propagate: { purge: false, ban: false } });
    await target.admin('POST', '/v1/purge', { url: `${SITE}/not-forwarded` });
    await target.admin('POST', '/v1/ban', { surrogate_key: 'not-forwarded' });
    await target.admin('POST', '/v1/refresh', { url: `${SITE}/forwarded` });
    await cdn.waitForCalls(1);
    await settled(target);
    assert.deepEqual(
      cdn.calls.map((call) => call.body),
      [{ files: [`${SITE}/forwarded`] }],
    );
    assert.equal((await target.status()).enabled, true);
    const off = await node({ propagate: { purge: false, ban: false, refresh: false } });
    assert.equal((await off.status()).enabled, false);
  });

  describe('sync mode (cdn.async: false)', () => {
    let origin: TestOrigin;
    before(async () => {
      origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=600' }, body: 'x' }));
    });
    after(async () => {
      await origin.close();
    });

    test('the answer waits for the CDN to confirm', async () => {
      const held = deferred();
      const target = await node({ async: false, origins: [origin.url] }, async () => {
        await held.promise;
        return OK;
      });
      let answered = false;
      const answer = target.admin('POST', '/v1/purge', { url: `${SITE}/sync` }).then((result) => {
        answered = true;
        return result;
      });
      await cdn.waitForCalls(1);
      // A negative check, kept as a sleep: nothing follows a wrong early answer that the test could
      // wait on instead, so it gives one 50 ms to arrive.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(answered, false, 'no answer while the CDN has not confirmed');
      held.resolve();
      assert.equal((await answer).status, 200);
      assert.equal((await target.status()).async, false);
    });

    test('a CDN that refuses gives 502 cdn_not_confirmed; the local purge stays applied', async () => {
      const target = await node({ async: false, origins: [origin.url] }, () => cloudflareError(400, 1012, 'bad request'));
      const url = `${target.svc.dataUrl}/page`;
      await fetchRaw(url);
      const answer = await target.admin('POST', '/v1/purge', { url });
      assert.equal(answer.status, 502);
      assert.equal(errorCode(answer), 'cdn_not_confirmed');
      assert.match(errorMessage(answer), /^the invalidation was applied, but the CDN did not confirm it: the CDN refused it: the CDN API answered 400/);
      const check = await target.admin('GET', `/v1/debug/cachecheck?url=${encodeURIComponent(url)}`);
      assert.equal((check.json as { hit: boolean }).hit, false, 'purged locally all the same');
      const stats = await target.admin('GET', '/v1/stats');
      assert.equal((stats.json as { invalidations: { purge: number } }).invalidations.purge, 1);
    });

    test('retries running out give 502 at once, and while the sender cools down a new purge is answered 502 without a call', async () => {
      const target = await node({ async: false, origins: [origin.url] }, () => ({ status: 500 }));
      const first = await target.admin('POST', '/v1/refresh', { url: `${SITE}/r` });
      assert.equal(first.status, 502);
      assert.match(errorMessage(first), /the CDN failed: the CDN API answered 500; the purge stays pending$/);
      assert.equal(cdn.calls.length, 4);
      const second = await target.admin('POST', '/v1/purge', { url: `${SITE}/p` });
      assert.equal(second.status, 502);
      assert.equal(cdn.calls.length, 4, 'no call while cooling down');
      assert.equal((await target.status()).pending, 2, 'both stay pending');
    });

    test('the typed client reads the status and reports the 502 with its code', async () => {
      const target = await node({ async: false, origins: [origin.url] }, () => cloudflareError(400, 1012, 'bad request'));
      const client = createAdminClient({ server: target.svc.adminUrl, token: 'test-admin-token-0123456789' });
      await assert.rejects(client.purge(`${SITE}/typed`), (error: unknown) => {
        assert.ok(error instanceof AdminApiError);
        assert.equal(error.status, 502);
        assert.equal(error.code, 'cdn_not_confirmed');
        return true;
      });
      const status = await client.cdnStatus();
      assert.equal(status.async, false);
      assert.match(String(status.last_error), /400/);
    });

    test('a skipped ban is answered 200: skipping is the documented outcome, not a failure', async () => {
      const target = await node({ async: false, origins: [origin.url] });
      assert.equal((await target.admin('POST', '/v1/ban', { path_regex: '.*' })).status, 200);
      assert.equal(cdn.calls.length, 0);
    });
  });
});
