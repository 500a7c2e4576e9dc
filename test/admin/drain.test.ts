// Issue 29 item 6: `GET /drain` refuses what a web page sends (any `Origin`, a `Sec-Fetch-Site` other
// than `none`) and still drains on a plain call; an authenticated `POST /v1/undrain` puts the node back
// in service, in every data-plane thread, those started after the drain included.
import { test, describe, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw } from '../support/http.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { eventually } from '../support/eventually.js';
import { adminCall, errorCode, errorMessage } from '../api/support/admin-fetch.js';

const TOKEN = 'test-admin-token-0123456789';

/** Fresh connections: SO_REUSEPORT spreads them over the threads, so that each thread answers some. */
const FRESH_CONNECTIONS = 16;

describe('drain and undrain', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  let releaseHeld = (): void => undefined;

  before(async () => {
    origin = await startTestOrigin(async (request) => {
      if (request.url === '/held') await new Promise<void>((resolve) => (releaseHeld = resolve));
      return { headers: { 'cache-control': request.url === '/held' ? 'no-store' : 'max-age=60' }, body: 'fine' };
    });
    // The default shape: one data-plane thread per core.
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  const readiness = async (): Promise<{ status: number; body: { status: string } }> => {
    const answer = await fetchRaw(`${svc.adminUrl}/readyz`);
    return { status: answer.status, body: JSON.parse(answer.body) as { status: string } };
  };
  const undrain = (token?: string) => adminCall(svc.adminUrl, 'POST', '/v1/undrain', { token });

  /** The `Connection` field of answers to requests on fresh connections, each asking for keep-alive. */
  async function connectionFields(): Promise<string[]> {
    const host = `Host: ${new URL(svc.dataUrl).host}`;
    const answers = await Promise.all(Array.from({ length: FRESH_CONNECTIONS }, () => sendRaw(svc.dataUrl, rawGet('/page', [host]), { untilResponse: true })));
    for (const answer of answers) assert.equal(answer.status, 200, answer.text.slice(0, 200));
    return answers.map((answer) => answer.headers.connection ?? '');
  }
  const allServing = (fields: string[]): boolean => fields.every((field) => field === 'keep-alive');
  const allClosing = (fields: string[]): boolean => fields.every((field) => field === 'close');

  test('/drain refuses what a web page sends, 403 cross_site_request, logged and counted; the node keeps serving', async () => {
    const refusals: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      // A page whose name was rebound to 127.0.0.1 is same-origin to the browser.
      { 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none', origin: 'https://evil.example' },
    ];
    for (const headers of refusals) {
      const answer = await adminCall(svc.adminUrl, 'GET', '/drain', { headers });
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.equal(errorCode(answer), 'cross_site_request');
      assert.match(errorMessage(answer), /web page.*request id [0-9a-f-]{36}/);
    }
    const line = await svc.logs.find('the refusal logged', (each) => each.msg === 'rejected' && each.reason === 'cross_site_request');
    assert.equal(line.listener, 'admin');
    assert.equal(line.status, 403);
    assert.equal(line.path, '/drain');
    const metrics = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
    assert.match(metrics, new RegExp(`^svc_http_requests_rejected_total\\{listener="admin",reason="cross_site_request"\\} ${refusals.length}$`, 'm'));
    assert.deepEqual(await readiness(), { status: 200, body: { status: 'ready' } });
    assert.ok(allServing(await connectionFields()), 'the data plane offers keep-alive');
  });

  test('a plain /drain drains; /v1/undrain needs the token, then every thread serves again; a second undrain changes nothing', async () => {
    const drained = await fetchRaw(`${svc.adminUrl}/drain`);
    assert.equal(drained.status, 200);
    assert.deepEqual(JSON.parse(drained.body), { status: 'drained' });
    assert.deepEqual(await readiness(), { status: 503, body: { status: 'drained' } });
    assert.ok(allClosing(await connectionFields()), 'a drained node closes every connection after its answer');

    const anonymous = await undrain();
    assert.equal(anonymous.status, 401);
    assert.equal(errorCode(anonymous), 'missing_token');
    const wrong = await undrain('not-the-admin-token');
    assert.equal(wrong.status, 401);
    assert.equal(errorCode(wrong), 'invalid_token');
    assert.equal((await readiness()).status, 503, 'a refused undrain leaves the node drained');

    const serving = await undrain(TOKEN);
    assert.equal(serving.status, 200);
    assert.deepEqual(serving.json, { status: 'serving' });
    assert.deepEqual(await readiness(), { status: 200, body: { status: 'ready' } });
    assert.ok(allServing(await connectionFields()), 'every thread offers keep-alive again');
    await svc.logs.find('the undrain logged', (line) => line.msg === 'undrained: serving again');

    const again = await undrain(TOKEN);
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, { status: 'serving' });
    assert.deepEqual(await readiness(), { status: 200, body: { status: 'ready' } });

    // A drain after an undrain is a drain of its own; what a person types in the address bar
    // (`Sec-Fetch-Site: none`) drains as curl does.
    const typed = await fetchRaw(`${svc.adminUrl}/drain`, { headers: { 'sec-fetch-site': 'none' } });
    assert.equal(typed.status, 200);
    assert.deepEqual(await readiness(), { status: 503, body: { status: 'drained' } });
    assert.equal((await undrain(TOKEN)).status, 200);
    assert.equal((await readiness()).status, 200);
  });

  test('a data-plane thread started again while the node is drained knows it, and is undrained with the others', async (context: TestContext) => {
    const threads = svc.node.dataPlaneThreads;
    if (threads === undefined) {
      context.skip('one data-plane thread: no thread starts again');
      return;
    }
    assert.equal((await fetchRaw(`${svc.adminUrl}/drain`)).status, 200);
    const restarts = threads.restarts;
    await threads.terminate(0);
    const everyThread = `listening (${svc.node.workers} of ${svc.node.workers} threads)`;
    await eventually(
      'the thread started again and serving',
      () => ({ restarts: threads.restarts, listener: svc.node.readiness.detail().find((condition) => condition.name === 'data_listener_bound')?.reason }),
      (now) => now.restarts > restarts && now.listener === everyThread,
    );
    assert.deepEqual(await readiness(), { status: 503, body: { status: 'drained' } });
    assert.ok(allClosing(await connectionFields()), 'the new thread closes connections too');
    assert.equal((await undrain(TOKEN)).status, 200);
    assert.ok(allServing(await connectionFields()), 'every thread offers keep-alive again');
  });

  test('an undrain during a drain answers once the drain is over, and leaves the node serving', async () => {
    const held = fetchRaw(`${svc.dataUrl}/held`);
    await eventually('the held request reached the origin', () => origin.requests.some((request) => request.url === '/held'), (reached) => reached);
    const answered: string[] = [];
    const drain = fetchRaw(`${svc.adminUrl}/drain`).then((answer) => {
      answered.push('drain');
      return answer;
    });
    await eventually('the drain began', readiness, (now) => now.body.status === 'draining');
    const serving = undrain(TOKEN).then((answer) => {
      answered.push('undrain');
      return answer;
    });
    // Neither answers while a request is in flight.
    assert.deepEqual((await readiness()).body, { status: 'draining' });
    assert.deepEqual(answered, []);
    releaseHeld();
    assert.equal((await held).status, 200);
    assert.deepEqual(JSON.parse((await drain).body), { status: 'drained' });
    assert.deepEqual((await serving).json, { status: 'serving' });
    assert.deepEqual(answered, ['drain', 'undrain']);
    assert.deepEqual(await readiness(), { status: 200, body: { status: 'ready' } });
    assert.ok(allServing(await connectionFields()));
  });
});
