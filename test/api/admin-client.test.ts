// Issue 4 item 6: the typed admin client against a real node, and its errors: the server's status and
// code, a refused connection, a timeout and an answer outside the documented shapes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdminApiError, adminBaseUrl, createAdminClient, InvalidServerAddressError } from '../../src/client/index.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw } from '../support/http.js';

const TOKEN = 'test-admin-token-0123456789';

async function rejection(promise: Promise<unknown>): Promise<AdminApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AdminApiError, `expected an AdminApiError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

async function listenOn(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('adminBaseUrl', () => {
  test('host:port, a bare host (port 9000) and URLs', () => {
    assert.equal(adminBaseUrl('127.0.0.1:9000'), 'http://127.0.0.1:9000');
    assert.equal(adminBaseUrl('admin.example'), 'http://admin.example:9000');
    assert.equal(adminBaseUrl('example.com:80'), 'http://example.com');
    assert.equal(adminBaseUrl('[::1]:9100'), 'http://[::1]:9100');
    assert.equal(adminBaseUrl('https://admin.example/'), 'https://admin.example');
    assert.equal(adminBaseUrl(new URL('http://10.0.0.1:9000')), 'http://10.0.0.1:9000');
  });
  test('refuses other schemes and junk', () => {
    for (const bad of ['ftp://x:21', 'http://', 'a b:9000', 'http://x:9000/?q=1']) {
      assert.throws(() => adminBaseUrl(bad), InvalidServerAddressError, bad);
    }
  });
});

describe('admin client against a node', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60', 'cache-tag': 'a,b' }, body: 'x' }));
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('every operation answers its typed body', async () => {
    const client = createAdminClient({ server: svc.adminUrl, token: TOKEN });
    await fetchRaw(`${svc.dataUrl}/one`);
    const authority = new URL(svc.dataUrl).host;
    assert.deepEqual(await client.purge(`${svc.dataUrl}/one`), { status: 'purged', count: 1, keys: [`http://${authority}/one`, `https://${authority}/one`] });
    assert.deepEqual(await client.purgeBatch([`${svc.dataUrl}/one`, 'bad']), { status: 'purged', count: 0, failed: 1 });
    await fetchRaw(`${svc.dataUrl}/two`);
    assert.deepEqual(await client.ban({ surrogate_key: 'b' }), { status: 'banned', count: 1 });
    assert.deepEqual(await client.refresh(`${svc.dataUrl}/two`), { status: 'refreshed', count: 0, keys: [`http://${authority}/two`, `https://${authority}/two`] });
    assert.deepEqual(await client.authCheck(), { status: 'ok' });
    assert.equal((await client.stats()).invalidations.purge_batch, 1);
    assert.equal((await client.config()).listen, '127.0.0.1:0');
    assert.equal((await client.cacheCheck(`${svc.dataUrl}/none`)).hit, false);
    assert.equal((await client.recentInvalidations()).invalidations[0]?.type, 'refresh');
    assert.deepEqual(await client.health(), { status: 'ok' });
    assert.equal((await client.ready(true)).conditions?.some((c) => c.name === 'data_listener_bound'), true);
    assert.match((await client.version()).version, /^\d+\.\d+\.\d+/);
  });

  test('peers answers without a token, an empty list on a node with no cluster', async () => {
    const client = createAdminClient({ server: svc.adminUrl });
    assert.deepEqual(await client.peers(), []);
  });

  test('server errors carry status, code and message', async () => {
    const wrong = await rejection(createAdminClient({ server: svc.adminUrl, token: 'wrong-token' }).stats());
    assert.equal(wrong.status, 401);
    assert.equal(wrong.code, 'invalid_token');
    assert.equal(wrong.message, '401 invalid_token: the bearer token is not the admin token');
    const none = await rejection(createAdminClient({ server: svc.adminUrl }).stats());
    assert.equal(none.code, 'missing_token');
    const client = createAdminClient({ server: svc.adminUrl, token: TOKEN });
    const badBan = await rejection(client.ban({}));
    assert.equal(badBan.status, 400);
    assert.equal(badBan.code, 'empty_ban');
    const badUrl = await rejection(client.purge('nope'));
    assert.equal(badUrl.code, 'invalid_request');
  });

  test('a refused connection says so, with status 0 and code unreachable', async () => {
    const server = createServer();
    const address = await listenOn(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await rejection(createAdminClient({ server: address, token: TOKEN }).purge('http://a/'));
    assert.equal(error.status, 0);
    assert.equal(error.code, 'unreachable');
    assert.match(error.message, new RegExp(`cannot reach the admin API at http://${address.replace(/\./g, '\\.')}: connection refused`));
  });

  test('no answer within the timeout is code timeout', async () => {
    const server = createServer(() => undefined);
    const address = await listenOn(server);
    try {
      const error = await rejection(createAdminClient({ server: address, token: TOKEN, timeoutMs: 200 }).health());
      assert.equal(error.code, 'timeout');
      assert.match(error.message, /within 200 ms/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('an answer outside the documented shapes is invalid_response; a non-API error body is http_error', async () => {
    const server = createServer((request, response) => {
      if (request.url === '/healthz') response.writeHead(200, { 'content-type': 'application/json' }).end('{"state":"fine"}');
      else response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
    });
    const address = await listenOn(server);
    try {
      const client = createAdminClient({ server: address, token: TOKEN });
      const shape = await rejection(client.health());
      assert.equal(shape.code, 'invalid_response');
      const gateway = await rejection(client.stats());
      assert.equal(gateway.status, 502);
      assert.equal(gateway.code, 'http_error');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
