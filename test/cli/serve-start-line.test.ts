// Issue 30 item 2: `svc serve` on the default `workers` (one data-plane thread per core) says once,
// for the node, that it serves, naming both listeners and the threads that run; /v1/config and
// /readyz?detail=1 give the same count. A real child process, a real file, a real signal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestOrigin } from '../support/test-origin.js';
import { freePort } from '../../bench/support/free-port.js';
import { fetchRaw } from '../support/http.js';
import { eventually } from '../support/eventually.js';
import { CLI_PATH } from './support/run-cli.js';

const TOKEN = 'start-line-token-0123456789';

test('svc serve logs one serving line for the node, with its listeners and thread count', { timeout: 60_000 }, async () => {
  const origin = await startTestOrigin(() => ({ body: 'x' }));
  const dir = await mkdtemp(join(tmpdir(), 'svc-start-line-'));
  const [dataPort, adminPort] = [await freePort(), await freePort()];
  const config = join(dir, 'svc.yaml');
  // No `workers`: the default, one thread per core, is what an operator gets.
  await writeFile(config, `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\npools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n`);
  const child = spawn(process.execPath, [CLI_PATH, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, SVC_ADMIN_TOKEN: TOKEN } });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const lines = (): Record<string, unknown>[] =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const serving = (): Record<string, unknown>[] => lines().filter((line) => line.msg === 'svc is serving');
  try {
    const [line] = await eventually('the serving line', serving, (found) => found.length > 0, { timeoutMs: 30_000 });
    const threads = availableParallelism();
    assert.ok(threads > 1, 'this machine has more than one core, so the default runs several threads');
    assert.deepEqual(line, { ...line, data: `http://127.0.0.1:${dataPort}`, admin: `http://127.0.0.1:${adminPort}`, workers: threads });

    const view = JSON.parse((await fetchRaw(`http://127.0.0.1:${adminPort}/v1/config`, { headers: { authorization: `Bearer ${TOKEN}` } })).body) as { workers: number };
    assert.equal(view.workers, threads, '/v1/config shows the threads that run, not the absent key');
    const detail = JSON.parse((await fetchRaw(`http://127.0.0.1:${adminPort}/readyz?detail=1`)).body) as { conditions: { name: string; reason: string }[] };
    assert.match(detail.conditions.find((condition) => condition.name === 'data_listener_bound')?.reason ?? '', new RegExp(`\\(${threads} threads\\)`));
    // Traffic through every thread, then the stop: everything the threads and the node ever log is in.
    for (let i = 0; i < 20; i++) await fetchRaw(`http://127.0.0.1:${dataPort}/page-${i}`);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0);
    assert.ok(lines().some((logged) => logged.msg === 'stopping'));
    assert.equal(serving().length, 1, 'one serving line for the node, not one per thread');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  }
});
