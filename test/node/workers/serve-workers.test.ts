// `svc serve` with `workers: 2`, as an operator runs it: a real primary forking two real data-plane
// workers on one port. Every request below opens a connection of its own, in bursts, so that the
// kernel hands connections to both workers; `/v1/stats` (the hot tiers of every worker, summed) says
// when each worker holds the object. The origin numbers its answers, so a body tells which fetch it
// came from: after a purge, no answer may carry a body fetched before it, from any worker.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestOrigin, type TestOrigin } from '../../support/test-origin.js';
import { freePort } from '../../support/free-port.js';
import { fetchRaw, rawHttpGet } from '../../support/http.js';
import { BURST, CLI, MAX_BURSTS, workerPids, type Served } from '../../support/workers/serve-process.js';

const TOKEN = 'workers-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

let origin: TestOrigin;
let dir: string;
let child: ChildProcess;
let stdout = '';
let dataUrl: string;
let adminUrl: string;
const served: Served[] = [];

async function hotEntries(): Promise<number> {
  const stats = JSON.parse((await fetchRaw(`${adminUrl}/v1/stats`, { headers: AUTH })).body) as { tiers: { hot: { entries: number } } };
  return stats.tiers.hot.entries;
}

/** One burst of requests for `path`, each on a new connection. */
async function burst(path: string): Promise<Served[]> {
  const answers = await Promise.all(Array.from({ length: BURST }, () => rawHttpGet(`${dataUrl}${path}`, {})));
  const burstServed = answers.map((answer) => {
    assert.equal(answer.status, path === '/logged' ? 404 : 200);
    return { cache: String(answer.headers['x-cache']), fetch: Number(answer.body.split(' ')[1]) };
  });
  served.push(...burstServed);
  return burstServed;
}

/** Bursts until both workers hold `path`, which none holds yet (two more hot entries); returns what every answer said. */
async function untilBothWorkersHold(path: string): Promise<Served[]> {
  const entriesBefore = await hotEntries();
  const seen: Served[] = [];
  for (let i = 0; i < MAX_BURSTS; i++) {
    seen.push(...(await burst(path)));
    if ((await hotEntries()) === entriesBefore + 2) return seen;
  }
  throw new Error(`both workers did not serve ${path} in ${MAX_BURSTS} bursts of ${BURST} connections`);
}

/** The primary's child processes: its workers. */
async function primaryWorkers(): Promise<number[]> {
  return workerPids(child.pid!);
}

describe('svc serve with two data-plane workers', () => {
  before(async () => {
    let fetches = 0;
    // /logged answers 404: the access log writes every non-200 answer (200s are sampled, 1 in 100).
    origin = await startTestOrigin((request) => ({ status: request.url === '/logged' ? 404 : 200, headers: { 'cache-control': 'max-age=300' }, body: `fetch ${++fetches}` }));
    dir = await mkdtemp(join(tmpdir(), 'svc-workers-'));
    const [dataPort, adminPort] = [await freePort(), await freePort()];
    dataUrl = `http://127.0.0.1:${dataPort}`;
    adminUrl = `http://127.0.0.1:${adminPort}`;
    const config = join(dir, 'svc.yaml');
    await writeFile(
      config,
      `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\nworkers: 2\n` +
        `pools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n`,
    );
    child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN } });
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    for (let i = 0; ; i++) {
      const ready = await fetchRaw(`${adminUrl}/readyz`).then(
        (answer) => answer.status === 200,
        () => false,
      );
      if (ready) break;
      if (i === 200) throw new Error(`svc did not become ready:\n${stdout}`);
      await sleep(100);
    }
  });

  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the primary forks two workers, and the data plane is served by both', async () => {
    assert.equal((await primaryWorkers()).length, 2);
    await untilBothWorkersHold('/both');
    const detail = JSON.parse((await fetchRaw(`${adminUrl}/readyz?detail=1`)).body) as { conditions: { name: string; reason: string }[] };
    assert.match(detail.conditions.find((condition) => condition.name === 'data_listener_bound')!.reason, /\(2 of 2 workers\)$/);
    const check = JSON.parse((await fetchRaw(`${adminUrl}/v1/debug/cachecheck?url=${encodeURIComponent(`${dataUrl}/both`)}`, { headers: AUTH })).body) as { hit: boolean; source: string };
    assert.deepEqual([check.hit, check.source], [true, 'hot'], 'the cache check looks into the workers');
  });

  test('a purge answered by the admin API has been applied in every worker: no answer after it is one fetched before', async () => {
    const before = await untilBothWorkersHold('/purged');
    assert.ok(before.some((answer) => answer.cache === 'HIT'), 'the object is cached before the purge');
    const lastFetchBefore = origin.requests.length;
    const entriesBefore = await hotEntries();
    const purge = await fetchRaw(`${adminUrl}/v1/purge`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${dataUrl}/purged` }) });
    assert.equal(purge.status, 200);
    assert.equal(await hotEntries(), entriesBefore - 2, 'no worker holds the object once the purge is answered');
    assert.equal((JSON.parse(purge.body) as { count: number }).count, 2, 'the answer counts the copy each worker held');
    const recent = JSON.parse((await fetchRaw(`${adminUrl}/v1/invalidations/recent`, { headers: AUTH })).body) as { invalidations: { type: string; argument: string; count: number }[] };
    assert.deepEqual(recent.invalidations[0], { ...recent.invalidations[0], type: 'purge', argument: `${dataUrl}/purged`, count: 2 }, 'the recent list (the dashboard\'s) counts what the workers removed');
    const after = await untilBothWorkersHold('/purged');
    for (const answer of after) assert.ok(answer.fetch > lastFetchBefore, `an answer after the purge came from fetch ${answer.fetch}, made before it (${answer.cache})`);
  });

  test('/metrics sums the requests of every worker under the names and labels of one process', async () => {
    const metrics = (await fetchRaw(`${adminUrl}/metrics`)).body;
    for (const cache of ['HIT', 'MISS']) {
      const lines = [...metrics.matchAll(new RegExp(`^svc_requests_total\\{[^}]*cache_result="${cache}"[^}]*route="all"\\} (\\d+)$`, 'gm'))];
      assert.ok(lines.length > 0, `no svc_requests_total for ${cache}:\n${metrics}`);
      const total = lines.reduce((sum, line) => sum + Number(line[1]), 0);
      assert.equal(total, served.filter((answer) => answer.cache === cache).length, `${cache} answers, summed over both workers`);
    }
    assert.equal(metrics.match(/^svc_startup_phase\{phase="log_replay"\} /gm)?.length, 1, 'the primary alone says its startup phases');
  });

  test('a worker killed with SIGKILL is forked again and logged, and the node stays ready meanwhile', async () => {
    const [victim, other] = await primaryWorkers();
    assert.ok(victim !== undefined && other !== undefined, 'two worker processes');
    process.kill(victim, 'SIGKILL');
    for (let i = 0; ; i++) {
      assert.equal((await fetchRaw(`${adminUrl}/readyz`)).status, 200, 'ready while a worker is forked again');
      assert.equal((await rawHttpGet(`${dataUrl}/both`, {})).status, 200, 'served while a worker is forked again');
      const now = await primaryWorkers();
      if (now.length === 2 && !now.includes(victim)) break;
      if (i === 100) throw new Error(`the killed worker was not forked again: ${now.join(' ')}`);
      await sleep(50);
    }
    assert.match(stdout, /"signal":"SIGKILL".*"msg":"data-plane worker exited: forking it again"/);
    const reason = async (): Promise<string> =>
      (JSON.parse((await fetchRaw(`${adminUrl}/readyz?detail=1`)).body) as { conditions: { name: string; reason: string }[] }).conditions.find((condition) => condition.name === 'data_listener_bound')!.reason;
    for (let i = 0; !(await reason()).endsWith('(2 of 2 workers)'); i++) {
      if (i === 100) throw new Error(`readiness does not count the new worker: ${await reason()}`);
      await sleep(50);
    }
  });

  test('the access log lines of every worker reach the output, one line per request, on a clean stop', async () => {
    const requests = (await untilBothWorkersHold('/logged')).length;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
    const lines = stdout.split('\n').filter((line) => line.includes('"msg":"access"') && line.includes('"path":"/logged"'));
    assert.equal(lines.length, requests);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `a whole line: ${line}`);
  });
});

test('svc serve with two workers whose port is taken exits 1 with the reason a single process gives', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-workers-'));
  const [dataPort, adminPort] = [await freePort(), await freePort()];
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(dataPort, '127.0.0.1', resolve));
  try {
    const config = join(dir, 'svc.yaml');
    await writeFile(config, `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\nworkers: 2\npools: [{ name: o, upstreams: ["http://127.0.0.1:1"] }]\nroutes: [{ name: all, pool: o }]\n`);
    const failing = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN } });
    let stderr = '';
    failing.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => failing.kill('SIGKILL'), 30_000);
    const [code] = (await once(failing, 'exit')) as [number | null];
    clearTimeout(killer);
    assert.equal(code, 1, 'svc exits by itself, not killed');
    assert.deepEqual(stderr.trim().split('\n'), [`svc: the data-plane listener cannot open 127.0.0.1:${dataPort}: address already in use (EADDRINUSE)`]);
  } finally {
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
});
