// Issue 21 item 4: a configuration reload changes routes, pools, cache settings, the admin token and
// the access log without dropping connections or the cache; what needs a restart, or a file that is
// invalid, is refused whole and the node stays as it was. The edge keys of issue 14 too.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { Client } from 'undici';
import { ConfigError } from '../../src/config/index.js';
import { ReloadRefusedError } from '../../src/config/index.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { eventually } from '../support/eventually.js';
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
      await eventually('/slow at the origin', () => a.requests.some((request) => request.url === '/slow'), (asked) => asked);

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
    await svc.logs.find('the access line with its query', (line) => line.msg === 'access' && line.path === '/other/nf?secret=1');
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
          'warm cannot change without a restart: the warm tier is locked and opened at startup',
        ]);
        return true;
      },
    );
    assert.equal(svc.node.config().listen, '127.0.0.1:0');
    assert.equal(svc.node.config().routes.length, 2, 'the routes of the refused file were not applied');
    await svc.logs.find('the refusal logged', (line) => line.msg === 'configuration not reloaded: a change needs a restart, the running configuration stays');

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

  test('edge keys: route methods and stripped fields, pool upload options and trusted_proxies apply; limits and the wrong-token limit need a restart', async () => {
    const origin = await startTestOrigin((request) => ({
      headers: { 'cache-control': 'no-store' },
      body: `${request.method} ${request.url}`,
      ...(request.url === '/upload/slow' ? { delayMs: 2_000 } : {}),
    }));
    const edge = await startSvc([origin.url], { reloadable: true });
    const file = JSON.parse(await readFile(edge.configFile!, 'utf8')) as Record<string, unknown> & { admin: Record<string, unknown> };
    const reloadEdge = async (changes: Record<string, unknown>): ReturnType<SvcUnderTest['node']['reload']> => {
      await writeFile(edge.configFile!, JSON.stringify({ ...file, ...changes }));
      return edge.node.reload();
    };
    const lastSeen = (): Record<string, unknown> => origin.requests.at(-1)!.headers;
    try {
      assert.equal((await fetchRaw(`${edge.dataUrl}/page`, { method: 'PURGE' })).status, 405);
      await fetchRaw(`${edge.dataUrl}/page`, { headers: { 'x-drop-me': '1', 'x-forwarded-for': '203.0.113.7' } });
      assert.equal(lastSeen()['x-drop-me'], '1');
      assert.equal(lastSeen()['x-forwarded-for'], '127.0.0.1', 'no proxy is trusted yet');

      const outcome = await reloadEdge({
        pools: [{ name: 'origin', upstreams: [origin.url], upload_connections: 1, queue_timeout: '200ms' }],
        routes: [{ name: 'main', match: { path_prefix: '/' }, pool: 'origin', methods: ['GET', 'HEAD', 'POST', 'PURGE'], strip_request_headers: ['x-drop-me'] }],
        trusted_proxies: ['127.0.0.0/8'],
      });
      assert.deepEqual(outcome.changed, ['pools', 'routes', 'trusted_proxies']);
      assert.equal((await fetchRaw(`${edge.dataUrl}/page`, { method: 'PURGE' })).status, 200, 'routes[].methods after the reload');
      await fetchRaw(`${edge.dataUrl}/page`, { headers: { 'x-drop-me': '1', 'x-forwarded-for': '203.0.113.7' } });
      assert.equal(lastSeen()['x-drop-me'], undefined, 'routes[].strip_request_headers after the reload');
      assert.equal(lastSeen()['x-forwarded-for'], '203.0.113.7, 127.0.0.1', 'trusted_proxies after the reload');

      // One upload connection, 200 ms to wait for it: a second upload behind a slow one gets 504.
      const slow = fetchRaw(`${edge.dataUrl}/upload/slow`, { method: 'POST', body: 'a' });
      await eventually('/upload/slow at the origin', () => origin.requests.some((request) => request.url === '/upload/slow'), (asked) => asked);
      assert.equal((await fetchRaw(`${edge.dataUrl}/upload/queued`, { method: 'POST', body: 'b' })).status, 504, 'pools[].upload_connections and queue_timeout');
      assert.equal((await slow).status, 200);

      await assert.rejects(
        reloadEdge({ limits: { max_header_bytes: 32_768 }, admin: { ...file.admin, auth_failure_limit: 3 } }),
        (error: unknown) => {
          assert.ok(error instanceof ReloadRefusedError);
          assert.deepEqual(error.reasons, [
            'admin.auth_failure_limit cannot change without a restart: the wrong-token limiter is set up at startup, and one rebuilt would forget the addresses it limits (10 → 3)',
            'limits cannot change without a restart: the listeners are created with their header, body and keep-alive limits at startup, and every upstream pool shares the per-client budget made then',
          ]);
          return true;
        },
      );
      assert.equal(edge.node.config().limits.max_header_bytes, 16_384);
    } finally {
      await edge.stop();
      await origin.close();
    }
  });

  test('max_active_bans applies to the next ban; a lower bound removes none of the bans in force', async () => {
    const origin = await startTestOrigin();
    const node = await startSvc([origin.url], { reloadable: true, config: { max_active_bans: 3 } });
    const file = JSON.parse(await readFile(node.configFile!, 'utf8')) as Record<string, unknown>;
    const ban = async (key: string): Promise<number> =>
      (
        await fetchRaw(`${node.adminUrl}/v1/ban`, {
          method: 'POST',
          headers: { authorization: `Bearer ${node.node.adminToken.value}`, 'content-type': 'application/json' },
          body: JSON.stringify({ surrogate_key: key }),
        })
      ).status;
    try {
      assert.deepEqual([await ban('a'), await ban('b')], [200, 200]);
      await writeFile(node.configFile!, JSON.stringify({ ...file, max_active_bans: 1 }));
      assert.deepEqual(await node.node.reload(), { status: 'reloaded', changed: ['max_active_bans'] });
      assert.equal(await ban('c'), 429, 'two bans in force, one allowed');
      assert.equal(node.node.invalidator.activeBans().length, 2, 'the bans in force stay');
      await writeFile(node.configFile!, JSON.stringify({ ...file, max_active_bans: 5 }));
      await node.node.reload();
      assert.equal(await ban('c'), 200);
    } finally {
      await node.stop();
      await origin.close();
    }
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
