// Issue 4 items 3-5: the token-protected admin API end to end, on a real node with a real origin:
// every endpoint, every error status with its body, auth order, and the token kept out of logs.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import {
  PURGE_BATCH_MAX_URLS,
  cacheCheckResponseSchema,
  recentInvalidationsResponseSchema,
  statsResponseSchema,
} from '../../src/api/index.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw, header } from '../support/http.js';
import { adminCall, errorCode, errorMessage } from './support/admin-fetch.js';

const TOKEN = 'test-admin-token-0123456789';

describe('admin API v1', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  const call = (method: string, path: string, options: Parameters<typeof adminCall>[3] = {}) =>
    adminCall(svc.adminUrl, method, path, { token: TOKEN, ...options });
  const get = (path: string) => fetchRaw(`${svc.dataUrl}${path}`);

  before(async () => {
    origin = await startTestOrigin((request) => {
      const tag = request.url?.startsWith('/tagged') ? { 'surrogate-key': 'product-7 catalog' } : undefined;
      if (request.url === '/validated' && request.headers['if-none-match'] === '"v1"') {
        return { status: 304, headers: { etag: '"v1"', 'cache-control': 'max-age=60' } };
      }
      return { headers: { 'cache-control': 'max-age=60', etag: '"v1"', ...tag }, body: `body of ${request.url}` };
    });
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('POST /v1/purge removes a cached URL: the next request is a MISS', async () => {
    await get('/p1');
    assert.equal(header(await get('/p1'), 'x-cache'), 'HIT');
    const answer = await call('POST', '/v1/purge', { body: { url: `${svc.dataUrl}/p1` } });
    assert.equal(answer.status, 200);
    const authority = new URL(svc.dataUrl).host;
    assert.deepEqual(answer.json, { status: 'purged', count: 1, keys: [`http://${authority}/p1`, `https://${authority}/p1`] });
    assert.equal(header(await get('/p1'), 'x-cache'), 'MISS');
  });

  test('POST /v1/purge of a URL that matches nothing answers count 0 and the keys it looked at', async () => {
    const answer = await call('POST', '/v1/purge', { body: { url: `${svc.dataUrl}/never/./stored` } });
    assert.equal(answer.status, 200);
    const authority = new URL(svc.dataUrl).host;
    assert.deepEqual(answer.json, { status: 'purged', count: 0, keys: [`http://${authority}/never/./stored`, `https://${authority}/never/./stored`] });
  });

  test('POST /v1/purge/batch purges the valid URLs and counts the others in failed', async () => {
    await get('/b1');
    await get('/b2');
    const answer = await call('POST', '/v1/purge/batch', { body: { urls: [`${svc.dataUrl}/b1`, `${svc.dataUrl}/b2`, 'not a url', 'ftp://x/'] } });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, { status: 'purged', count: 2, failed: 2 });
    assert.equal(header(await get('/b1'), 'x-cache'), 'MISS');
    assert.equal(header(await get('/b2'), 'x-cache'), 'MISS');
  });

  test(`a batch above ${PURGE_BATCH_MAX_URLS} URLs is 413 batch_too_large; exactly the limit is accepted`, async () => {
    const urls = Array.from({ length: PURGE_BATCH_MAX_URLS + 1 }, (_, i) => `${svc.dataUrl}/many/${i}`);
    const over = await call('POST', '/v1/purge/batch', { body: { urls } });
    assert.equal(over.status, 413);
    assert.equal(errorCode(over), 'batch_too_large');
    assert.match(errorMessage(over), new RegExp(`${PURGE_BATCH_MAX_URLS + 1} URLs.*${PURGE_BATCH_MAX_URLS}`));
    const atLimit = await call('POST', '/v1/purge/batch', { body: { urls: urls.slice(1) } });
    assert.equal(atLimit.status, 200);
    assert.deepEqual(atLimit.json, { status: 'purged', count: 0, failed: 0 });
  });

  test('POST /v1/ban by surrogate key evicts the tagged entries and says how many', async () => {
    await get('/tagged/1');
    await get('/tagged/2');
    await get('/untagged');
    const answer = await call('POST', '/v1/ban', { body: { surrogate_key: 'product-7' } });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, { status: 'banned', count: 2 });
    assert.equal(header(await get('/tagged/1'), 'x-cache'), 'MISS');
    assert.equal(header(await get('/untagged'), 'x-cache'), 'HIT');
  });

  test('POST /v1/ban: no field is 400 empty_ban; a regex RE2 refuses is 400 invalid_regex naming the field', async () => {
    for (const body of [{}, { host_regex: '', path_regex: '' }]) {
      const empty = await call('POST', '/v1/ban', { body });
      assert.equal(empty.status, 400);
      assert.equal(errorCode(empty), 'empty_ban');
    }
    for (const body of [{ path_regex: '(unclosed' }, { host_regex: '(?<=lookbehind)x' }]) {
      const bad = await call('POST', '/v1/ban', { body });
      assert.equal(bad.status, 400);
      assert.equal(errorCode(bad), 'invalid_regex');
      assert.match(errorMessage(bad), new RegExp(Object.keys(body)[0]!));
    }
  });

  test('POST /v1/refresh marks an entry stale: the next request revalidates (304) and is REVALIDATED', async () => {
    await get('/validated');
    assert.equal(header(await get('/validated'), 'x-cache'), 'HIT');
    const answer = await call('POST', '/v1/refresh', { body: { url: `${svc.dataUrl}/validated` } });
    assert.equal(answer.status, 200);
    const authority = new URL(svc.dataUrl).host;
    assert.deepEqual(answer.json, { status: 'refreshed', count: 1, keys: [`http://${authority}/validated`, `https://${authority}/validated`] });
    const next = await get('/validated');
    assert.equal(header(next, 'x-cache'), 'REVALIDATED');
    assert.equal(next.body, 'body of /validated');
  });

  test('URLs that are not absolute http(s) with a host are 400 invalid_request naming the field', async () => {
    for (const path of ['/v1/purge', '/v1/refresh']) {
      for (const url of ['/relative', 'ftp://example.com/', 'http://', 42]) {
        const answer = await call('POST', path, { body: { url } });
        assert.equal(answer.status, 400, `${path} ${String(url)}`);
        assert.equal(errorCode(answer), 'invalid_request');
        assert.match(errorMessage(answer), /^url: expected an absolute http:\/\/ or https:\/\/ URL with a host/);
      }
    }
  });

  test('malformed JSON is 400, a non-JSON body 415, an oversized body 413, each with its code', async () => {
    const malformed = await call('POST', '/v1/purge', { rawBody: '{"url":', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
    assert.equal(errorCode(malformed), 'malformed_json');
    const form = await call('POST', '/v1/ban', { rawBody: 'surrogate_key=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
    assert.equal(errorCode(form), 'unsupported_media_type');
    const huge = await call('POST', '/v1/purge/batch', { body: { urls: ['x'.repeat(2 * 1024 * 1024)] } });
    assert.equal(huge.status, 413);
    assert.equal(errorCode(huge), 'payload_too_large');
  });

  test('every token endpoint answers 401 with a Bearer challenge before looking at the request', async () => {
    const endpoints: [string, string][] = [
      ['POST', '/v1/purge'],
      ['POST', '/v1/purge/batch'],
      ['POST', '/v1/ban'],
      ['POST', '/v1/refresh'],
      ['GET', '/v1/auth/check'],
      ['GET', '/v1/stats'],
      ['GET', '/v1/config'],
      ['GET', '/v1/debug/cachecheck'],
      ['GET', '/v1/invalidations/recent'],
    ];
    for (const [method, path] of endpoints) {
      const missing = await adminCall(svc.adminUrl, method, path, { rawBody: 'not json', headers: { 'content-type': 'text/plain' } });
      assert.equal(missing.status, 401, `${method} ${path}`);
      assert.equal(errorCode(missing), 'missing_token');
      assert.equal(header(missing, 'www-authenticate'), 'Bearer realm="svc"');
      const wrong = await adminCall(svc.adminUrl, method, path, { token: 'wrong-token' });
      assert.equal(wrong.status, 401);
      assert.equal(errorCode(wrong), 'invalid_token');
      assert.equal(header(wrong, 'www-authenticate'), 'Bearer realm="svc", error="invalid_token"');
    }
  });

  test('404 for an unknown /v1 path and 405 with Allow for a wrong method', async () => {
    const missing = await call('GET', '/v1/nope');
    assert.equal(missing.status, 404);
    assert.equal(errorCode(missing), 'not_found');
    const wrong = await call('GET', '/v1/purge');
    assert.equal(wrong.status, 405);
    assert.equal(header(wrong, 'allow'), 'POST');
    assert.equal(errorCode(wrong), 'method_not_allowed');
  });

  test('GET /v1/auth/check is ok with the configured token', async () => {
    const answer = await call('GET', '/v1/auth/check');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, { status: 'ok' });
  });

  test('GET /v1/stats has entries and bytes per tier, active bans and invalidation counts', async () => {
    await get('/stats-entry');
    const answer = await call('GET', '/v1/stats');
    assert.equal(answer.status, 200);
    const stats = v.parse(statsResponseSchema, answer.json);
    assert.ok(stats.tiers.hot.entries >= 1);
    assert.ok(stats.tiers.hot.bytes > 0);
    assert.equal(stats.tiers.warm, null);
    assert.ok(stats.bans.active >= 1, 'the surrogate-key ban of an earlier test is active');
    assert.ok(stats.invalidations.purge >= 1 && stats.invalidations.ban >= 1 && stats.invalidations.refresh >= 1);
  });

  test('GET /v1/config is the running configuration with the admin token redacted', async () => {
    const answer = await call('GET', '/v1/config');
    assert.equal(answer.status, 200);
    const config = answer.json as { admin: { token: string; listen: string }; routes: unknown[] };
    assert.equal(config.admin.token, '[redacted]');
    assert.equal(config.routes.length, 1);
    assert.ok(!answer.body.includes(TOKEN));
  });

  test('GET /v1/debug/cachecheck shows key, hit, source, freshness and tags; url is required and checked', async () => {
    await get('/tagged/check');
    const answer = await call('GET', `/v1/debug/cachecheck?url=${encodeURIComponent(`${svc.dataUrl}/tagged/check`)}`);
    assert.equal(answer.status, 200);
    const check = v.parse(cacheCheckResponseSchema, answer.json);
    assert.equal(check.hit, true);
    assert.equal(check.source, 'hot');
    assert.equal(check.key, `${svc.dataUrl}/tagged/check`);
    assert.deepEqual([...check.tags].sort(), ['catalog', 'product-7']);
    assert.ok(check.freshness_remaining_s !== null && check.freshness_remaining_s > 0);
    assert.ok(check.matching_bans.some((ban) => ban.surrogate_key === 'product-7'), 'the product-7 ban matches the tags');

    const miss = v.parse(cacheCheckResponseSchema, (await call('GET', `/v1/debug/cachecheck?url=${encodeURIComponent(`${svc.dataUrl}/never`)}`)).json);
    assert.equal(miss.hit, false);
    assert.equal(miss.source, null);

    for (const query of ['', '?url=', '?url=%2Frelative']) {
      const bad = await call('GET', `/v1/debug/cachecheck${query}`);
      assert.equal(bad.status, 400, query);
      assert.equal(errorCode(bad), 'invalid_request');
      assert.match(errorMessage(bad), /^url: /);
    }
  });

  test('GET /v1/invalidations/recent lists operations newest first with type, argument, time and count', async () => {
    await call('POST', '/v1/purge', { body: { url: `${svc.dataUrl}/recent-marker` } });
    const answer = await call('GET', '/v1/invalidations/recent');
    assert.equal(answer.status, 200);
    const { invalidations } = v.parse(recentInvalidationsResponseSchema, answer.json);
    assert.equal(invalidations[0]?.type, 'purge');
    assert.equal(invalidations[0]?.argument, `${svc.dataUrl}/recent-marker`);
    const times = invalidations.map((entry) => Date.parse(entry.at));
    assert.deepEqual(times, [...times].sort((a, b) => b - a));
    assert.ok(invalidations.some((entry) => entry.type === 'ban' && entry.argument.includes('surrogate_key=product-7')));
  });

  test('/debug/pprof/* is not mounted when admin.pprof_enabled is false', async () => {
    const answer = await call('GET', '/debug/pprof/heap');
    assert.equal(answer.status, 404);
  });

  test('the admin token appears in no log line and no metric', async () => {
    const metrics = await fetchRaw(`${svc.adminUrl}/metrics`);
    assert.ok(!metrics.body.includes(TOKEN));
    assert.ok(svc.logs.text.length > 0, 'the node logged something');
    assert.ok(!svc.logs.text.some((line) => line.includes(TOKEN)));
  });
});

describe('admin token resolution order (spec §5)', () => {
  let origin: TestOrigin;
  before(async () => {
    origin = await startTestOrigin();
  });
  after(async () => {
    await origin.close();
  });

  const status = async (svc: SvcUnderTest, path: string, token: string | undefined) =>
    (await adminCall(svc.adminUrl, 'GET', path, { token })).status;

  test('SVC_ADMIN_TOKEN beats admin.token', async () => {
    const svc = await startSvc([origin.url], { env: { SVC_ADMIN_TOKEN: 'env-token-abcdefghijkl' } });
    try {
      assert.equal(await status(svc, '/v1/auth/check', 'env-token-abcdefghijkl'), 200);
      assert.equal(await status(svc, '/v1/auth/check', TOKEN), 401);
      assert.equal(svc.node.adminToken.source, 'env');
      assert.ok(!svc.logs.text.some((line) => line.includes('env-token-abcdefghijkl')));
    } finally {
      await svc.stop();
    }
  });

  test('admin.token is used when SVC_ADMIN_TOKEN is absent or empty', async () => {
    const svc = await startSvc([origin.url], { env: { SVC_ADMIN_TOKEN: '' } });
    try {
      assert.equal(await status(svc, '/v1/auth/check', TOKEN), 200);
      assert.equal(svc.node.adminToken.source, 'config');
    } finally {
      await svc.stop();
    }
  });

  test('with neither, a generated token works, is logged once at WARN, and /v1/auth/check is not mounted', async () => {
    const svc = await startSvc([origin.url], { config: { admin: { listen: '127.0.0.1:0' } } });
    try {
      const generated = svc.node.adminToken.value;
      assert.equal(svc.node.adminToken.source, 'generated');
      assert.equal(await status(svc, '/v1/stats', generated), 200);
      assert.equal(await status(svc, '/v1/stats', TOKEN), 401);
      assert.equal(await status(svc, '/v1/auth/check', generated), 404);
      const mentions = await svc.logs.filter('the token logged', (line) => JSON.stringify(line).includes(generated), 1);
      assert.equal(mentions.length, 1);
      assert.equal(mentions[0]!.level, 'warn');
    } finally {
      await svc.stop();
    }
  });
});
