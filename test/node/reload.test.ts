// Issue 21 item 4: a configuration reload changes routes, pools, cache settings, the admin token and
// the access log without dropping connections or the cache; what needs a restart, or a file that is
// invalid, is refused whole and the node stays as it was.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { Client } from 'undici';
import { ConfigError } from '../../src/config/index.js';
import { ReloadRefusedError } from '../../src/node/reload/config-reloader.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw } from '../support/http.js';

const TOKEN = 'test-admin-token-0123456789';
const NEW_TOKEN = 'the-new-admin-token-after-reload';

async function status(svc: SvcUnderTest, path: string, token: string): Promise<number> {
  return (await fetchRaw(`${svc.adminUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })).status;
}

async function metric(svc: SvcUnderTest, line: string): Promise<string | undefined> {
  const text = (await svc.node.metrics.exposition()).body;
  return text.split('\n').find((candidate) => candidate.startsWith(line));
}

describe('configuration reload', () => {
  let a: TestOrigin;
  let b: TestOrigin;
  let svc: SvcUnderTest;
  let original: Record<string, unknown>;

  /** Writes the original configuration with `changes` over it, then reloads. */
  async function reloadWith(changes: Record<string, unknown>): ReturnType<SvcUnderTest['node']['reload']> {
    await writeFile(svc.configFile!, JSON.stringify({ ...original, ...changes }));
    return svc.node.reload();
  }

  before(async () => {
    a = await startTestOrigin((request) => ({
      headers: { 'cache-control': 'max-age=600' },
      body: request.url === '/big' ? 'x'.repeat(20_000) : request.url?.startsWith('/fill/') ? 'f'.repeat(2_000) : `a${request.url}`,
      ...(request.url === '/slow' ? { delayMs: 600 } : {}),
    }));
    b = await startTestOrigin((request) => ({ status: request.url?.startsWith('/other/nf') ? 404 : 200, headers: { 'cache-control': 'max-age=600' }, body: `b${request.url}` }));
    svc = await startSvc([a.url], { reloadable: true, config: { hot_max_bytes: 10_000_000 } });
    original = JSON.parse(await readFile(svc.configFile!, 'utf8')) as Record<string, unknown>;
  });
  after(async () => {
    await svc.stop();
    await a.close();
    await b.close();
  });

  test('routes, pools, cache settings and the token change; the connection and the cache stay', async () => {
    const client = new Client(svc.dataUrl);
    let connections = 0;
    client.on('connect', () => connections++);
    const get = async (path: string): Promise<{ body: string; cache: string | undefined }> => {
      const answer = await client.request({ method: 'GET', path });
      const cacheHeader = answer.headers['x-cache'];
      return { body: await answer.body.text(), cache: Array.isArray(cacheHeader) ? cacheHeader.join() : cacheHeader };
    };
    try {
      assert.deepEqual(await get('/kept'), { body: 'a/kept', cache: 'MISS' });
      const slow = get('/slow');
      await new Promise((resolve) => setTimeout(resolve, 100));

      const outcome = await reloadWith({
        pools: [
          { name: 'origin', upstreams: [a.url], connect_timeout: '1s', response_timeout: '2s' },
          { name: 'second', upstreams: [b.url] },
        ],
        routes: [
          { name: 'main', match: { path_prefix: '/' }, pool: 'origin' },
          { name: 'other', match: { path_prefix: '/other/' }, pool: 'second', cache: { enabled: false } },
        ],
        admin: { listen: '127.0.0.1:0', token: NEW_TOKEN },
        max_object_bytes: 10_000,
      });
      assert.deepEqual(outcome, { status: 'reloaded', changed: ['admin.token', 'max_object_bytes', 'pools', 'routes'] });

      assert.deepEqual(await slow, { body: 'a/slow', cache: 'MISS' }, 'a request in flight finishes');
      assert.deepEqual(await get('/kept'), { body: 'a/kept', cache: 'HIT' }, 'the cache is kept');
      assert.deepEqual(await get('/other/x'), { body: 'b/other/x', cache: 'BYPASS' }, 'the new route and pool serve');
      // BYPASS: its Content-Length says at once that it will not be stored (docs/http-caching.md).
      assert.equal((await get('/big')).cache, 'BYPASS', 'a body above the new max_object_bytes is not stored');
      assert.equal((await get('/big')).cache, 'BYPASS', 'nor served from the cache afterwards');
      assert.equal(connections, 1, 'the client connection was never dropped');

      assert.equal(await status(svc, '/v1/stats', TOKEN), 401, 'the old token is refused');
      assert.equal(await status(svc, '/v1/stats', NEW_TOKEN), 200);
      assert.equal(await status(svc, '/v1/auth/check', NEW_TOKEN), 200);
      const config = (await (await fetchRaw(`${svc.adminUrl}/v1/config`, { headers: { authorization: `Bearer ${NEW_TOKEN}` } })).body) as string;
      assert.equal((JSON.parse(config) as { max_object_bytes: number }).max_object_bytes, 10_000, '/v1/config shows the configuration in force');
      assert.equal(await metric(svc, 'svc_config_reloads_total{result="reloaded"}'), 'svc_config_reloads_total{result="reloaded"} 1');
    } finally {
      await client.close();
    }
    original = JSON.parse(await readFile(svc.configFile!, 'utf8')) as Record<string, unknown>;
  });

  test('a smaller hot_max_bytes evicts at once; the access log query mode changes', async () => {
    for (let i = 0; i < 20; i++) await fetchRaw(`${svc.dataUrl}/fill/${i}`);
    assert.ok(svc.node.cache.hot.byteCount > 20_000);
    const outcome = await reloadWith({ hot_max_bytes: 4_000, log: { access_query: 'full' } });
    assert.deepEqual(outcome.changed, ['hot_max_bytes', 'log.access_query']);
    assert.ok(svc.node.cache.hot.byteCount <= 4_000, `hot tier holds ${svc.node.cache.hot.byteCount} bytes`);
    await fetchRaw(`${svc.dataUrl}/other/nf?secret=1`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(svc.logs.lines.some((line) => line.msg === 'access' && line.path === '/other/nf?secret=1'));
    original = JSON.parse(await readFile(svc.configFile!, 'utf8')) as Record<string, unknown>;
  });

  test('a change that needs a restart is refused whole, with each key and why; nothing is applied', async () => {
    const before = await svc.node.reload();
    assert.deepEqual(before, { status: 'unchanged', changed: [] });
    await assert.rejects(
      reloadWith({
        listen: '127.0.0.1:1',
        warm: { path: `${svc.dir}/warm`, max_bytes: 1_000_000 },
        cdn: { zone_id: 'z' },
        routes: [{ name: 'main', match: { path_prefix: '/' }, pool: 'origin', cache: { ttl_override: '5s' } }],
      }),
      (error: unknown) => {
        assert.ok(error instanceof ReloadRefusedError);
        assert.deepEqual(error.reasons, [
          'cdn cannot change without a restart: it is read at startup only',
          'listen cannot change without a restart: the data-plane listener is bound at startup ("127.0.0.1:0" → "127.0.0.1:1")',
          'warm cannot change without a restart: the warm tier is locked, opened and indexed at startup',
        ]);
        return true;
      },
    );
    assert.equal(svc.node.config().listen, '127.0.0.1:0');
    assert.equal(svc.node.config().routes.length, 2, 'the routes of the refused file were not applied');
    assert.ok(svc.logs.lines.some((line) => line.msg === 'configuration not reloaded: a change needs a restart, the running configuration stays'));

    await assert.rejects(reloadWith({ routes: [{ name: 'main', pool: 'origin', refresh_before_expiry: true }] }), (error: unknown) => {
      assert.ok(error instanceof ReloadRefusedError);
      assert.match(error.message, /refresh_before_expiry .* cannot change without a restart: background refresh is set up at startup/);
      return true;
    });
    assert.equal(await metric(svc, 'svc_config_reloads_total{result="refused"}'), 'svc_config_reloads_total{result="refused"} 2');
  });

  test('an invalid file is refused and the node serves on as it was', async () => {
    await writeFile(svc.configFile!, 'routes: [');
    await assert.rejects(svc.node.reload(), ConfigError);
    await assert.rejects(reloadWith({ routes: [{ name: 'main', pool: 'missing' }] }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /routes\[0\]\.pool: expected the name of a pool/);
      return true;
    });
    assert.equal(svc.node.config().hot_max_bytes, 4_000);
    const served = await fetchRaw(`${svc.dataUrl}/other/served`);
    assert.equal(served.body, 'b/other/served', 'the node serves on its last good configuration');
    assert.equal(await metric(svc, 'svc_config_reloads_total{result="invalid"}'), 'svc_config_reloads_total{result="invalid"} 2');
  });

  test('SVC_ADMIN_TOKEN keeps precedence over a reloaded admin.token; removing admin.token generates one', async () => {
    const origin = await startTestOrigin();
    const withEnv = await startSvc([origin.url], { reloadable: true, env: { SVC_ADMIN_TOKEN: TOKEN } });
    const generated = await startSvc([origin.url], { reloadable: true });
    try {
      const envConfig = JSON.parse(await readFile(withEnv.configFile!, 'utf8')) as Record<string, unknown>;
      await writeFile(withEnv.configFile!, JSON.stringify({ ...envConfig, admin: { listen: '127.0.0.1:0', token: NEW_TOKEN } }));
      assert.deepEqual((await withEnv.node.reload()).changed, ['admin.token']);
      assert.equal(await status(withEnv, '/v1/stats', TOKEN), 200);
      assert.equal(await status(withEnv, '/v1/stats', NEW_TOKEN), 401);

      const plain = JSON.parse(await readFile(generated.configFile!, 'utf8')) as Record<string, unknown>;
      await writeFile(generated.configFile!, JSON.stringify({ ...plain, admin: { listen: '127.0.0.1:0' } }));
      await generated.node.reload();
      assert.equal(generated.node.adminToken.source, 'generated');
      assert.equal(await status(generated, '/v1/stats', TOKEN), 401);
      assert.equal(await status(generated, '/v1/stats', generated.node.adminToken.value), 200);
      assert.equal(await status(generated, '/v1/auth/check', generated.node.adminToken.value), 404, 'auth check exists only with a configured token');
      assert.ok(generated.logs.lines.some((line) => line.admin_token === generated.node.adminToken.value), 'the generated token is logged once');
    } finally {
      await withEnv.stop();
      await generated.stop();
      await origin.close();
    }
  });
});
