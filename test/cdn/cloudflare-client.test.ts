// One CDN call against a fake Cloudflare API on 127.0.0.1: what it sends, and how each kind of answer
// is classified for the retry rules (spec §6.3). No message it returns holds the token, even when the
// CDN echoes the token back.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CloudflareClient, MAX_VALUES_PER_CALL } from '../../src/cdn/cloudflare-client.js';
import type { CallResult } from '../../src/http/call-result.js';
import { startFakeCdn, OK, cloudflareError, type FakeCdn, type FakeCdnAnswer } from './support/fake-cdn.js';

const TOKEN = 'cf-token-Qz7vK2pL9xW4mN8rT1yU';

describe('CloudflareClient', () => {
  let cdn: FakeCdn;
  let client: CloudflareClient;
  let answer: FakeCdnAnswer = OK;
  const never = new AbortController().signal;

  before(async () => {
    cdn = await startFakeCdn(() => answer);
    // The calls that are answered have time to spare on a loaded machine (300 ms was once not enough
    // beside a second test run); the hang's own timeout is the short one, tested below.
    client = new CloudflareClient({ baseUrl: `${cdn.url}/client/v4/`, zoneId: 'zone/1', token: TOKEN, timeoutMs: 5_000, now: Date.now });
  });
  after(async () => {
    await client.close();
    await cdn.close();
  });

  async function purge(next: FakeCdnAnswer, values = ['https://shop.example/a']): Promise<CallResult> {
    answer = next;
    return client.purge('files', values, never);
  }

  test('posts the kind and its values as JSON to {base}/zones/{zone_id}/purge_cache with the bearer token', async () => {
    const calls = cdn.calls.length;
    assert.deepEqual(await purge(OK, ['https://shop.example/a', 'https://shop.example/b']), { outcome: 'ok' });
    const call = cdn.calls[calls]!;
    assert.equal(call.method, 'POST');
    assert.equal(call.path, '/client/v4/zones/zone%2F1/purge_cache', 'the zone id is one path segment');
    assert.equal(call.headers.authorization, `Bearer ${TOKEN}`);
    assert.match(call.headers['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(call.body, { files: ['https://shop.example/a', 'https://shop.example/b'] });
    answer = OK;
    await client.purge('tags', ['t1'], never);
    assert.deepEqual(cdn.calls.at(-1)!.body, { tags: ['t1'] });
  });

  test('refuses a call beyond the per-call limit', async () => {
    const values = Array.from({ length: MAX_VALUES_PER_CALL + 1 }, (_, i) => `https://shop.example/${i}`);
    await assert.rejects(client.purge('files', values, never), RangeError);
    await assert.rejects(client.purge('files', [], never), RangeError);
  });

  test('classifies 429 (with and without Retry-After), 5xx, other 4xx and a 200 that says it failed', async () => {
    assert.deepEqual(await purge(cloudflareError(429, 971, 'slow down', { 'retry-after': '3' })), {
      outcome: 'rate_limited',
      retryAfterMs: 3000,
      message: 'the CDN API answered 429: slow down (code 971)',
    });
    const noRetryAfter = await purge(cloudflareError(429, 971, 'slow down'));
    assert.equal(noRetryAfter.outcome, 'rate_limited');
    assert.equal((noRetryAfter as { retryAfterMs?: number }).retryAfterMs, undefined);
    assert.deepEqual(await purge({ status: 503, body: '<html>' }), { outcome: 'server_error', status: 503, message: 'the CDN API answered 503' });
    assert.deepEqual(await purge(cloudflareError(400, 1012, 'Request must contain one of "files"')), {
      outcome: 'refused',
      status: 400,
      message: 'the CDN API answered 400: Request must contain one of "files" (code 1012)',
    });
    const falseSuccess = await purge(cloudflareError(200, 1000, 'not purged'));
    assert.equal(falseSuccess.outcome, 'refused');
  });

  test('a reset connection and a hang are network errors; the hang ends at the timeout', async () => {
    const reset = await purge('reset');
    assert.equal(reset.outcome, 'network_error');
    assert.match((reset as { message: string }).message, /could not be reached: /);
    const impatient = new CloudflareClient({ baseUrl: `${cdn.url}/client/v4/`, zoneId: 'zone/1', token: TOKEN, timeoutMs: 300, now: Date.now });
    answer = 'hang';
    try {
      assert.deepEqual(await impatient.purge('files', ['https://shop.example/a'], never), {
        outcome: 'network_error',
        message: 'the CDN API did not answer within 300 ms',
      });
    } finally {
      await impatient.close();
    }
  });

  test('a refused connection is a network error', async () => {
    const closed = await startFakeCdn();
    const url = closed.url;
    await closed.close();
    const orphan = new CloudflareClient({ baseUrl: url, zoneId: 'z', token: TOKEN, timeoutMs: 1000, now: Date.now });
    try {
      const result = await orphan.purge('files', ['https://shop.example/a'], never);
      assert.equal(result.outcome, 'network_error');
      assert.match((result as { message: string }).message, /ECONNREFUSED/);
    } finally {
      await orphan.close();
    }
  });

  test('stopping abandons the call', async () => {
    answer = 'hang';
    const stop = new AbortController();
    const arrived = cdn.calls.length + 1;
    const pending = client.purge('files', ['https://shop.example/a'], stop.signal);
    await cdn.waitForCalls(arrived);
    stop.abort();
    assert.deepEqual(await pending, { outcome: 'aborted' });
  });

  test('a CDN that echoes the token back does not get it into the message', async () => {
    const echoed = await purge(cloudflareError(403, 10000, `Authentication error for Bearer ${TOKEN}`));
    assert.equal(echoed.outcome, 'refused');
    const message = (echoed as { message: string }).message;
    assert.ok(!message.includes(TOKEN), message);
    assert.match(message, /Bearer \[redacted\]/);
  });
});
