// Spec §5 item 6 and issue 18 item 4: the CDN token comes from cdn.api_token or CDN_API_TOKEN, and
// never appears in a log line, an error message, the status, the metrics or GET /v1/config, on any
// path: CDN errors that echo it, network errors, refusals, and sync-mode failures.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeCdn, OK, cloudflareError, type FakeCdn, type FakeCdnAnswer } from './support/fake-cdn.js';
import { eventually } from '../support/eventually.js';
import { startCdnNode, CDN_TOKEN, type CdnNode } from './support/cdn-node.js';
import { startSvc } from '../support/svc-harness.js';
import { CdnError } from '../../src/cdn/errors.js';

const SITE = 'https://shop.example.com';

/** A CDN error whose message repeats the Authorization field it was sent. */
function echoing(status: number, headers: Record<string, string> = {}): FakeCdnAnswer {
  return cloudflareError(status, 10000, `rejected request with Authorization: Bearer ${CDN_TOKEN}`, headers);
}

describe('the CDN token', () => {
  let cdn: FakeCdn;
  before(async () => {
    cdn = await startFakeCdn();
  });
  after(async () => {
    await cdn.close();
  });

  test('cdn.api_token is used when set, CDN_API_TOKEN otherwise; with neither the node does not start', async () => {
    cdn.calls.length = 0;
    cdn.handle(() => OK);
    const fromEnv = await startCdnNode(cdn);
    try {
      await fromEnv.admin('POST', '/v1/purge', { url: `${SITE}/env` });
      await cdn.waitForCalls(1);
      assert.equal(cdn.calls[0]!.headers.authorization, `Bearer ${CDN_TOKEN}`);
    } finally {
      await fromEnv.stop();
    }

    const cdnBlock = { zone_id: 'z', api_base_url: cdn.url };
    const fromConfig = await startSvc(['http://127.0.0.1:9'], { config: { cdn: { ...cdnBlock, api_token: 'from-config' } }, env: { CDN_API_TOKEN: 'from-env' } });
    try {
      await fetch(`${fromConfig.adminUrl}/v1/purge`, {
        method: 'POST',
        headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${SITE}/config` }),
      });
      await cdn.waitForCalls(2);
      assert.equal(cdn.calls[1]!.headers.authorization, 'Bearer from-config', 'the configured token wins');
    } finally {
      await fromConfig.stop();
    }

    await assert.rejects(startSvc(['http://127.0.0.1:9'], { config: { cdn: cdnBlock }, env: {} }), (error: unknown) => {
      assert.ok(error instanceof CdnError);
      assert.equal(error.code, 'no_token');
      assert.match(error.message, /cdn\.api_token is empty and CDN_API_TOKEN is not set/);
      return true;
    });
    const badToken = `bad token ${CDN_TOKEN}`;
    await assert.rejects(startSvc(['http://127.0.0.1:9'], { config: { cdn: cdnBlock }, env: { CDN_API_TOKEN: badToken } }), (error: unknown) => {
      assert.ok(error instanceof CdnError);
      assert.equal(error.code, 'invalid_token');
      assert.ok(!error.message.includes(CDN_TOKEN), error.message);
      return true;
    });
  });

  async function everythingShown(node: CdnNode): Promise<string[]> {
    const shown = [node.logText(), await node.metrics(), JSON.stringify(await node.status())];
    for (const path of ['/v1/config', '/v1/stats', '/v1/invalidations/recent']) shown.push((await node.admin('GET', path)).body);
    return shown;
  }

  test('no log line, status, metric or config view holds it, whatever the CDN answers', async () => {
    cdn.calls.length = 0;
    // One call through 429, 5xx, reset and hang (retries run out), one refused with a 400, one refused with a 401.
    const answers: FakeCdnAnswer[] = [echoing(429, { 'retry-after': '1' }), echoing(500), 'reset', 'hang', echoing(400), echoing(401)];
    cdn.handle((_call, index) => answers[index] ?? OK);
    const node = await startCdnNode(cdn, { tokenInConfig: true, timeout: '200ms' });
    const shownToClients: string[] = [];
    try {
      shownToClients.push((await node.admin('POST', '/v1/purge', { url: `${SITE}/1` })).body);
      await eventually('the retries to run out', () => node.status(), (status) => status.last_error !== null);
      node.timers.fireHeld();
      shownToClients.push((await node.admin('POST', '/v1/refresh', { url: `${SITE}/2` })).body);
      await cdn.waitForCalls(5);
      await node.svc.logs.find('the 400 to be logged', (line) => line.msg === 'CDN refused a purge: not retried');
      shownToClients.push((await node.admin('POST', '/v1/ban', { surrogate_key: 'three' })).body);
      await cdn.waitForCalls(6);
      await node.svc.logs.find('the 401 to be logged', (line) => String(line.msg).startsWith('CDN refused the token'));

      assert.ok(cdn.calls.every((call) => call.headers.authorization === `Bearer ${CDN_TOKEN}`), 'every call carried the token');
      const config = (await node.admin('GET', '/v1/config')).json as { cdn: { api_token: string } };
      assert.equal(config.cdn.api_token, '[redacted]');
      const errors = node.svc.logs.lines.filter((line) => line.level === 'error' || line.level === 'warn');
      assert.ok(errors.length >= 3, 'the error paths were logged');
      assert.match(String((await node.status()).last_error), /Bearer \[redacted\]/);
      for (const text of [...(await everythingShown(node)), ...shownToClients]) assert.ok(!text.includes(CDN_TOKEN), text.slice(0, 500));
    } finally {
      await node.stop();
    }
    assert.ok(!node.logText().includes(CDN_TOKEN), 'nor after stopping');
  });

  test('nor does a sync-mode failure, in its answer or in the admin server\'s error log', async () => {
    cdn.calls.length = 0;
    cdn.handle(() => echoing(400));
    const node = await startCdnNode(cdn, { async: false });
    try {
      const answer = await node.admin('POST', '/v1/purge', { url: `${SITE}/sync` });
      assert.equal(answer.status, 502);
      assert.match(answer.body, /Bearer \[redacted\]/);
      assert.ok(node.svc.logs.lines.some((line) => line.msg === 'admin request failed'), 'the 502 was logged');
      for (const text of [answer.body, ...(await everythingShown(node))]) assert.ok(!text.includes(CDN_TOKEN), text.slice(0, 500));
    } finally {
      await node.stop();
    }
  });
});
