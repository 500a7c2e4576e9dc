// Issue 21 item 7: `svc serve` checks what the configuration names before it starts, names the key
// and the cause of each problem, and takes a lock so that two processes never share a warm directory;
// a lock left by a killed process does not block the restart.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LIBP2P_PACKAGES, missingLibp2pMessage, missingLibp2pPackages } from '../../src/clustering/libp2p-packages.js';
import { LOCK_FILE_NAME } from '../../src/store/warm/directory-lock.js';
import { freePort } from '../../bench/support/free-port.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw } from '../support/http.js';
import { SERVE_READY_WAIT_MS } from '../support/workers/serve-process.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const TOKEN = 'startup-check-token-0123456789';

interface Exit {
  code: number | null;
  stderr: string;
}

interface Serve {
  child: ChildProcess;
  exit: Promise<Exit>;
}

function serve(config: string, env: NodeJS.ProcessEnv = { SVC_ADMIN_TOKEN: TOKEN }): Serve {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, ...env } });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = once(child, 'exit').then(([code]) => ({ code: code as number | null, stderr }));
  return { child, exit };
}

/**
 * Waits for a process that must exit (a refused start, a stop); one that has not within 30 s is
 * killed, so the test fails on its exit code instead of waiting. A node the test keeps serving is not
 * bounded this way: however long a loaded machine makes the test, it is stopped by the test.
 */
async function exited(run: Serve): Promise<Exit> {
  const killer = setTimeout(() => run.child.kill('SIGKILL'), 30_000);
  try {
    return await run.exit;
  } finally {
    clearTimeout(killer);
  }
}

/** Ready: the warm tier's lock taken and its index read, which a machine running a second suite makes slow. */
async function waitReady(adminPort: number, child: ChildProcess): Promise<void> {
  await eventually(
    'svc ready',
    () => fetchRaw(`http://127.0.0.1:${adminPort}/readyz`).then((answer) => answer.status, () => 0),
    (status) => {
      assert.equal(child.exitCode, null, 'svc exited before it was ready');
      return status === 200;
    },
    { timeoutMs: SERVE_READY_WAIT_MS, everyMs: 100 },
  );
}

describe('startup checks', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-startup-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function configFile(name: string, extra: string, ports: { data: number; admin: number }): Promise<string> {
    const path = join(dir, name);
    await writeFile(
      path,
      `listen: 127.0.0.1:${ports.data}\nadmin: { listen: "127.0.0.1:${ports.admin}" }\n` +
        'pools: [{ name: o, upstreams: ["http://127.0.0.1:1"] }]\nroutes: [{ name: all, pool: o }]\n' +
        extra,
    );
    return path;
  }

  test('two processes cannot share a warm directory; a lock left by kill -9 does not block the restart', { timeout: 180_000 }, async () => {
    const warm = join(dir, 'shared-warm');
    const warmBlock = `warm: { path: ${JSON.stringify(warm)}, max_bytes: 10000000 }\n`;
    const firstPorts = { data: await freePort(), admin: await freePort() };
    const first = serve(await configFile('first.yaml', warmBlock, firstPorts));
    let third: Serve | undefined;
    try {
      await waitReady(firstPorts.admin, first.child);
      assert.ok((await readdir(warm)).includes(LOCK_FILE_NAME));

      const second = serve(await configFile('second.yaml', warmBlock, { data: await freePort(), admin: await freePort() }));
      const refused = await exited(second);
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr,
        `svc: warm.path: ${warm} is in use by another svc process (pid ${first.child.pid}); two processes cannot share one warm directory\n`,
      );
      assert.equal((await fetchRaw(`http://127.0.0.1:${firstPorts.admin}/readyz`)).status, 200, 'the first node serves on');

      first.child.kill('SIGKILL');
      await first.exit;
      const thirdPorts = { data: await freePort(), admin: await freePort() };
      third = serve(await configFile('third.yaml', warmBlock, thirdPorts));
      await waitReady(thirdPorts.admin, third.child);
      third.child.kill('SIGTERM');
      assert.equal((await exited(third)).code, 0);
      assert.ok(!(await readdir(warm)).includes(LOCK_FILE_NAME), 'a clean stop removes the lock');
    } finally {
      for (const process of [first, third]) if (process && process.child.exitCode === null) process.child.kill('SIGKILL');
    }
  });

  test('a missing TLS file and a short SVC_ADMIN_TOKEN stop svc with their key and cause (exit 1)', async () => {
    const ports = { data: await freePort(), admin: await freePort() };
    const missing = join(dir, 'missing.key');
    const tls = `hop_limit: 1\ncluster: { node_name: a, insecure: true, bind: "127.0.0.1:${await freePort()}", tls: { cert: ${JSON.stringify(missing)}, key: ${JSON.stringify(missing)}, ca: ${JSON.stringify(missing)} } }\n`;
    const tlsRun = await exited(serve(await configFile('tls.yaml', tls, ports)));
    assert.equal(tlsRun.code, 1);
    const reason = `cannot read ${JSON.stringify(missing)}: no such file or directory (ENOENT)`;
    assert.deepEqual(tlsRun.stderr.trimEnd().split('\n'), ['cert', 'key', 'ca'].map((key) => `svc: cluster.tls.${key}: ${reason}`));

    const tokenRun = await exited(serve(await configFile('token.yaml', '', ports), { SVC_ADMIN_TOKEN: 'abc' }));
    assert.equal(tokenRun.code, 1);
    assert.equal(tokenRun.stderr, 'svc: SVC_ADMIN_TOKEN: expected a string of at least 16 characters (the rule of admin.token), got a string of 3 characters\n');
  });

  test('missing libp2p packages are named with what to install', () => {
    const installed = new Set<string>(LIBP2P_PACKAGES.filter((name) => name !== 'libp2p' && name !== '@libp2p/tcp'));
    const resolve = (name: string): string => {
      if (!installed.has(name)) throw new Error(`Cannot find package '${name}'`);
      return `file:///node_modules/${name}`;
    };
    const missing = missingLibp2pPackages(resolve);
    assert.deepEqual(missing, ['@libp2p/tcp', 'libp2p']);
    assert.match(missingLibp2pMessage(missing), /^the libp2p transport needs its optional packages, and @libp2p\/tcp, libp2p are not installed: install them beside svc \(npm install @libp2p\/crypto .* libp2p\) or use transport: udp$/);
    assert.deepEqual(missingLibp2pPackages(), [], 'this repository has them (dev dependencies)');
  });
});
