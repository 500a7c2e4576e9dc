// `svc serve` as an operator runs it: a real child process, a real config file, real signals.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startTestOrigin } from '../support/test-origin.js';
import { freePort } from '../../bench/support/free-port.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { runCli } from '../cli/support/run-cli.js';
import { SERVE_READY_WAIT_MS } from '../support/workers/serve-process.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

async function waitReady(adminUrl: string): Promise<void> {
  await eventually('svc ready', async () => (await fetchRaw(`${adminUrl}/readyz`)).status, (status) => status === 200, { timeoutMs: SERVE_READY_WAIT_MS, everyMs: 100, tolerateErrors: true });
}

describe('svc serve', () => {
  test('serves from a config file and stops cleanly on SIGTERM', async () => {
    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'from origin' }));
    const dir = await mkdtemp(join(tmpdir(), 'svc-serve-'));
    const [dataPort, adminPort] = [await freePort(), await freePort()];
    const config = join(dir, 'svc.yaml');
    await writeFile(
      config,
      // One process: the second request must find what the first stored (with workers it could land
      // on another worker before the warm tier has the entry).
      `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\nworkers: 1\nwarm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: 10000000 }\n` +
        `pools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n`,
    );
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: 'serve-test-token-0123456789' } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      await waitReady(`http://127.0.0.1:${adminPort}`);
      const first = await fetchRaw(`http://127.0.0.1:${dataPort}/page`);
      const second = await fetchRaw(`http://127.0.0.1:${dataPort}/page`);
      assert.equal(header(first, 'x-cache'), 'MISS');
      assert.equal(header(second, 'x-cache'), 'HIT');
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0);
      assert.match(stdout, /"msg":"stopping"/);
      assert.ok(!stdout.includes('serve-test-token-0123456789'), 'the admin token is never logged');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await origin.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('SIGHUP and svc reload apply a new configuration in the running process; a refused one leaves it as it was', { timeout: 60_000 }, async () => {
    const origin = await startTestOrigin((request) => ({ status: request.url === '/missing' ? 404 : 200, headers: { 'cache-control': 'max-age=60' }, body: 'x' }));
    const dir = await mkdtemp(join(tmpdir(), 'svc-serve-'));
    const [dataPort, adminPort] = [await freePort(), await freePort()];
    const config = join(dir, 'svc.yaml');
    const file = (extra: string, token = 'serve-test-token-0123456789'): string =>
      // One process: this test rewrites the file between reloads faster than workers re-read it (a
      // worker that reads a file its primary refused is killed and forked again, by design).
      `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}", token: "${token}" }\nworkers: 1\nwarm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: 10000000 }\n` +
      `pools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n${extra}`;
    await writeFile(config, file(''));
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    /** Waits until `text` was logged `times` times. */
    const logged = async (text: string, times = 1): Promise<void> => {
      await eventually(`${text} logged ${times} times`, () => stdout.split(text).length - 1, (count) => count >= times, { timeoutMs: 15_000 });
    };
    const admin = `http://127.0.0.1:${adminPort}`;
    const authorized = (token: string) => fetchRaw(`${admin}/v1/stats`, { headers: { authorization: `Bearer ${token}` } });
    try {
      await waitReady(admin);
      await fetchRaw(`http://127.0.0.1:${dataPort}/page`);

      // SIGHUP: a new token and a new log format; the cache and the process stay.
      await writeFile(config, file('log: { format: pretty }\n', 'reloaded-token-0123456789'));
      child.kill('SIGHUP');
      await logged('INFO: configuration reloaded');
      assert.equal((await authorized('reloaded-token-0123456789')).status, 200);
      assert.equal((await authorized('serve-test-token-0123456789')).status, 401);
      assert.equal(header(await fetchRaw(`http://127.0.0.1:${dataPort}/page`), 'x-cache'), 'HIT', 'the cache survived');
      await fetchRaw(`http://127.0.0.1:${dataPort}/missing`);
      await logged('INFO: access');

      // svc reload: a listen change is refused, the node keeps its configuration and serves on.
      await writeFile(config, file('log: { format: pretty }\n', 'reloaded-token-0123456789').replace(`listen: 127.0.0.1:${dataPort}`, 'listen: 127.0.0.1:1'));
      const refused = await runCli(['reload', '--server', admin, '--token', 'reloaded-token-0123456789']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^svc: reload failed: 409 restart_required: the configuration was not reloaded, the running one stays: listen cannot change without a restart: the data-plane listener is bound at startup \("127\.0\.0\.1:\d+" → "127\.0\.0\.1:1"\)\n$/);
      // And SIGHUP with the same file: refused too, and the process does not die.
      child.kill('SIGHUP');
      await logged('a change needs a restart', 2);
      assert.equal(header(await fetchRaw(`http://127.0.0.1:${dataPort}/page`), 'x-cache'), 'HIT');

      await writeFile(config, file('', 'reloaded-token-0123456789'));
      const accepted = await runCli(['reload', '--server', admin, '--token', 'reloaded-token-0123456789']);
      assert.equal(accepted.code, 0, accepted.stderr);
      assert.equal(accepted.stdout, 'reloaded: log.format\n');

      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0, 'SIGTERM still stops svc cleanly');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await origin.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a bad config prints each problem with its key path and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-serve-'));
    const config = join(dir, 'bad.yaml');
    await writeFile(config, 'pools: [{ name: o, upstreams: ["ftp://x"] }]\nroutes: [{ name: r, pool: missing, cache: { ttl_override: "30 seconds" } }]\n');
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    await rm(dir, { recursive: true, force: true });
    assert.equal(code, 1);
    assert.match(stderr, /routes\[0\]\.cache\.ttl_override: expected a duration like "30s", got "30 seconds"/);
    assert.match(stderr, /pools\[0\]\.upstreams\[0\]:/);
    assert.match(stderr, /routes\[0\]\.pool:/);
  });

  test('a port already taken stops svc with one clear line and exit 1, whichever listener it was', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-serve-'));
    const [dataPort, adminPort, clusterPort] = [await freePort(), await freePort(), await freePort()];
    const squatter = createServer();
    const squatterUdp = createSocket('udp4');
    try {
      const base =
        `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\nwarm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: 10000000 }\n` +
        'pools: [{ name: o, upstreams: ["http://127.0.0.1:1"] }]\nroutes: [{ name: all, pool: o }]\n';
      const run = async (config: string): Promise<{ code: number | null; stderr: string }> => {
        const path = join(dir, 'svc.yaml');
        await writeFile(path, config);
        const child = spawn(process.execPath, [CLI, 'serve', '--config', path], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: 'serve-test-token-0123456789' } });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const [code] = (await once(child, 'exit')) as [number | null];
        clearTimeout(killer);
        return { code, stderr };
      };

      await new Promise<void>((resolve) => squatter.listen(dataPort, '127.0.0.1', resolve));
      const data = await run(base);
      assert.equal(data.code, 1, 'svc exits by itself, not killed');
      assert.deepEqual(data.stderr.trim().split('\n'), [`svc: listen: the data-plane listener cannot open 127.0.0.1:${dataPort}: address already in use (EADDRINUSE)`]);
      await new Promise<void>((resolve) => squatter.close(() => resolve()));

      // The cluster's UDP port taken: the admin and data listeners already open must not keep svc alive.
      await new Promise<void>((resolve) => squatterUdp.bind(clusterPort, '127.0.0.1', resolve));
      const cluster = await run(`${base}cluster: { mode: eventual, node_name: a, bind: "127.0.0.1:${clusterPort}", insecure: true }\n`);
      assert.equal(cluster.code, 1, 'svc exits by itself, not killed');
      assert.equal(cluster.stderr.trim().split('\n').length, 1, cluster.stderr);
      assert.match(cluster.stderr, new RegExp(`^svc: .*127\\.0\\.0\\.1:${clusterPort}`));
    } finally {
      squatter.close();
      squatterUdp.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an unknown --log-format is a usage error (exit 2)', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--config', 'x.yaml', '--log-format', 'xml'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 2);
    assert.equal(stderr.trim().split('\n').length, 1);
    assert.match(stderr, /--log-format must be json or pretty/);
  });
});
