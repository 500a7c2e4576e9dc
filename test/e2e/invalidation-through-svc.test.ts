// Issue 4 end to end: each invalidation through the admin API (and the CLI), in both tiers, across a
// restart, and the race with a fetch in flight when a ban arrives.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';

const TOKEN = 'test-admin-token-0123456789';
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

async function admin(svc: SvcUnderTest, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const answer = await fetchRaw(`${svc.adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: answer.status, json: JSON.parse(answer.body) as Record<string, unknown> };
}

/** Requests name one site whatever port the node listens on, so keys survive a restart. */
const SITE = { host: 'shop.example' };
const get = (svc: SvcUnderTest, path: string) => fetchRaw(`${svc.dataUrl}${path}`, { headers: SITE });

/** A node with a warm tier in `dir`, so a restart keeps what was cached (and what was invalidated). */
function startWithWarm(origin: TestOrigin, dir: string): Promise<SvcUnderTest> {
  return startSvc([origin.url], { dir, config: { warm: { path: join(dir, 'warm'), max_bytes: 50_000_000 } } });
}

/** The origin counts each path's version, so a body tells which fetch produced it. */
function versionedOrigin(): Promise<TestOrigin> {
  const versions = new Map<string, number>();
  return startTestOrigin((request) => {
    const path = request.url ?? '/';
    const version = (versions.get(path) ?? 0) + 1;
    versions.set(path, version);
    if (request.headers['if-none-match'] === '"stable"') return { status: 304, headers: { etag: '"stable"', 'cache-control': 'max-age=300' } };
    return {
      headers: {
        'cache-control': 'max-age=300',
        'surrogate-key': path.startsWith('/product/') ? 'products' : 'other',
        ...(path === '/refreshable' ? { etag: '"stable"' } : {}),
      },
      body: `${path} v${version}`,
      delayMs: path === '/race' ? 400 : 0,
    };
  });
}

describe('invalidation through svc', () => {
  test('purge and surrogate-key ban hide content in both tiers, and still do after a restart', async () => {
    const origin = await versionedOrigin();
    const dir = await mkdtemp(join(tmpdir(), 'svc-inv-'));
    try {
      let svc = await startWithWarm(origin, dir);
      for (const path of ['/page', '/product/1', '/product/2', '/keep']) await get(svc, path);
      assert.equal(header(await get(svc, '/product/1'), 'x-cache'), 'HIT');

      // The public URL is https (TLS ends in front of svc): it names the same stored entry.
      const purged = await admin(svc, '/v1/purge', { url: 'https://shop.example/page' });
      assert.equal(purged.status, 200);
      assert.equal(purged.json.status, 'purged');
      const banned = await admin(svc, '/v1/ban', { surrogate_key: 'products' });
      assert.equal(banned.status, 200);
      assert.equal(banned.json.count, 2, 'both tagged entries evicted from the hot tier');

      await svc.node.cache.ownedWarm!.flush();
      await svc.stop();
      svc = await startWithWarm(origin, dir);
      try {
        const keep = await get(svc, '/keep');
        assert.equal(header(keep, 'x-cache'), 'HIT', 'untouched entries come back from the warm tier');
        assert.equal(keep.body, '/keep v1');
        for (const path of ['/page', '/product/1', '/product/2']) {
          const answer = await get(svc, path);
          assert.equal(header(answer, 'x-cache'), 'MISS', `${path} is not served after its invalidation and a restart`);
          assert.equal(answer.body, `${path} v2`);
        }
      } finally {
        await svc.stop();
      }
    } finally {
      await origin.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a fetch in flight when a ban arrives is banned too', async () => {
    const origin = await versionedOrigin();
    const svc = await startSvc([origin.url]);
    try {
      const inFlight = fetchRaw(`${svc.dataUrl}/race`);
      // At the origin, which holds its answer 400 ms: the ban comes while the fetch is under way.
      await eventually('the fetch at the origin', () => origin.requests.some((request) => request.url === '/race'), (asked) => asked);
      assert.equal((await admin(svc, '/v1/ban', { path_regex: '^/race' })).status, 200);
      assert.equal((await inFlight).body, '/race v1', 'the request already under way gets its answer');
      const after = await fetchRaw(`${svc.dataUrl}/race`);
      assert.equal(header(after, 'x-cache'), 'MISS', 'what that fetch stored is not served after the ban');
      assert.equal(after.body, '/race v2');
    } finally {
      await svc.stop();
      await origin.close();
    }
  });

  test('refresh marks an entry stale: the next request revalidates and the origin answers 304', async () => {
    const origin = await versionedOrigin();
    const svc = await startSvc([origin.url]);
    try {
      await fetchRaw(`${svc.dataUrl}/refreshable`);
      assert.equal((await admin(svc, '/v1/refresh', { url: `${svc.dataUrl}/refreshable` })).json.status, 'refreshed');
      const revalidated = await fetchRaw(`${svc.dataUrl}/refreshable`);
      assert.equal(header(revalidated, 'x-cache'), 'REVALIDATED');
      assert.equal(revalidated.body, '/refreshable v1', 'the stored body is reused');
      assert.equal(origin.requests.at(-1)!.headers['if-none-match'], '"stable"');
      assert.equal(header(await fetchRaw(`${svc.dataUrl}/refreshable`), 'x-cache'), 'HIT');
    } finally {
      await svc.stop();
      await origin.close();
    }
  });

  test('the CLI purges through the admin API', async () => {
    const origin = await versionedOrigin();
    const svc = await startSvc([origin.url]);
    try {
      await fetchRaw(`${svc.dataUrl}/cli`);
      const child = spawn(process.execPath, [CLI, 'purge', `${svc.dataUrl}/cli`, '--server', svc.adminUrl.replace('http://', ''), '--output', 'json'], {
        env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      assert.equal(code, 0);
      assert.equal((JSON.parse(stdout) as { status: string }).status, 'purged');
      assert.equal(header(await fetchRaw(`${svc.dataUrl}/cli`), 'x-cache'), 'MISS');
    } finally {
      await svc.stop();
      await origin.close();
    }
  });
});
