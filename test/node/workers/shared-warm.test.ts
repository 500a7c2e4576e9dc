// `svc serve` with two data-plane workers and a warm tier, as an operator runs it: the primary owns
// the tier (its index, its writes), each worker reads it from the memory map they share. Requests
// open a connection each, in bursts, so that the kernel hands connections to both workers; the
// origin numbers its answers, so a body tells which fetch it came from.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestOrigin, type TestOrigin } from '../../support/test-origin.js';
import { freePort } from '../../support/free-port.js';
import { fetchRaw, rawHttpGet } from '../../support/http.js';
import { BURST, CLI, killWithWorkers, MAX_BURSTS, untilWarmSynced, workerPids, type Served } from '../../support/workers/serve-process.js';

const TOKEN = 'shared-warm-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

interface Tiers {
  hot: { entries: number };
  warm: { entries: number };
}

let origin: TestOrigin;
let dir: string;
let configFile: string;
let child: ChildProcess;
let stdout = '';
let dataUrl: string;
let adminUrl: string;
/** Fetches the origin had made when the ban below was answered: nothing it hides may be served. */
let fetchesAtBan = 0;

async function tiers(): Promise<Tiers> {
  return (JSON.parse((await fetchRaw(`${adminUrl}/v1/stats`, { headers: AUTH })).body) as { tiers: Tiers }).tiers;
}

async function get(path: string): Promise<Served> {
  const answer = await rawHttpGet(`${dataUrl}${path}`, {});
  assert.equal(answer.status, 200);
  return { cache: String(answer.headers['x-cache']), fetch: Number(answer.body.split(' ')[1]) };
}

/** Bursts until both workers hold `path` in their hot tiers (`missing` more hot entries); returns every answer. */
async function untilBothWorkersHold(path: string, missing = 2): Promise<Served[]> {
  const entriesBefore = (await tiers()).hot.entries;
  const seen: Served[] = [];
  for (let i = 0; i < MAX_BURSTS; i++) {
    seen.push(...(await Promise.all(Array.from({ length: BURST }, () => get(path)))));
    if ((await tiers()).hot.entries === entriesBefore + missing) return seen;
  }
  throw new Error(`both workers did not serve ${path} in ${MAX_BURSTS} bursts of ${BURST} connections`);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; !(await check()); i++) {
    if (i === 200) throw new Error(`${what} did not happen:\n${stdout}`);
    await sleep(50);
  }
}

async function startSvc(): Promise<void> {
  stdout = '';
  child = spawn(process.execPath, [CLI, 'serve', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN } });
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  await until('svc ready', () =>
    fetchRaw(`${adminUrl}/readyz`).then(
      (answer) => answer.status === 200,
      () => false,
    ),
  );
  // The workers read the warm tier once the primary says it is indexed.
  await until('the warm tier indexed', async () => stdout.includes('"msg":"warm tier indexed"'));
}

describe('svc serve with two data-plane workers sharing one warm tier', () => {
  before(async () => {
    let fetches = 0;
    origin = await startTestOrigin(() => ({ status: 200, headers: { 'cache-control': 'max-age=300' }, body: `fetch ${++fetches}` }));
    dir = await mkdtemp(join(tmpdir(), 'svc-shared-warm-'));
    const [dataPort, adminPort] = [await freePort(), await freePort()];
    dataUrl = `http://127.0.0.1:${dataPort}`;
    adminUrl = `http://127.0.0.1:${adminPort}`;
    configFile = join(dir, 'svc.yaml');
    await writeFile(
      configFile,
      `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\nworkers: 2\n` +
        `warm: { path: "${join(dir, 'warm')}", max_bytes: 10000000 }\n` +
        `pools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n`,
    );
    await startSvc();
  });

  after(async () => {
    await killWithWorkers(child);
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('an object one worker fetched is served by the other from the warm tier: the origin is asked once', async () => {
    const before = Date.now();
    const first = await get('/shared');
    assert.deepEqual(first, { cache: 'MISS', fetch: 1 });
    // The primary indexes the store at once and commits it a moment later.
    await until('the primary holds the object in the warm tier', async () => (await tiers()).warm.entries === 1);
    await untilWarmSynced(adminUrl, before);
    // The first worker holds it in its hot tier already: the other's copy comes from the warm tier.
    const answers = await untilBothWorkersHold('/shared', 1);
    for (const answer of answers) assert.deepEqual(answer, { cache: 'HIT', fetch: 1 }, 'every later answer is the first fetch, from either tier');
    assert.equal(origin.requests.filter((request) => request.url === '/shared').length, 1);
  });

  test('a purge answered by the admin API leaves no worker serving the object, from either tier', async () => {
    await untilBothWorkersHold('/purged');
    const before = await tiers();
    assert.ok(before.warm.entries >= 2, 'the warm tier holds the object before the purge');
    const lastFetchBefore = origin.requests.length;
    const purge = await fetchRaw(`${adminUrl}/v1/purge`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${dataUrl}/purged` }) });
    assert.equal(purge.status, 200);
    assert.equal((await tiers()).warm.entries, before.warm.entries - 1, 'the warm copy is gone once the purge is answered');
    // Every worker, straight away: each answer is a fetch made after the purge.
    for (let i = 0; i < 4; i++) {
      for (const answer of await Promise.all(Array.from({ length: BURST }, () => get('/purged')))) {
        assert.ok(answer.fetch > lastFetchBefore, `an answer after the purge came from fetch ${answer.fetch}, made before it (${answer.cache})`);
      }
    }
  });

  test('a ban answered by the admin API hides the object in every worker, warm copies included', async () => {
    const warmBefore = (await tiers()).warm.entries;
    const before = Date.now();
    await get('/banned/a');
    // Not asked for again before the workers restart (below): its warm record stays until a prune.
    await get('/banned/b');
    await until('the primary holds the banned objects', async () => (await tiers()).warm.entries === warmBefore + 2);
    await untilWarmSynced(adminUrl, before);
    const lastFetchBefore = origin.requests.length;
    fetchesAtBan = lastFetchBefore;
    const ban = await fetchRaw(`${adminUrl}/v1/ban`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ path_regex: '^/banned/' }) });
    assert.equal(ban.status, 200, ban.body);
    for (let i = 0; i < 4; i++) {
      for (const answer of await Promise.all(Array.from({ length: BURST }, () => get('/banned/a')))) {
        assert.ok(answer.fetch > lastFetchBefore, `an answer after the ban came from fetch ${answer.fetch}, made before it (${answer.cache})`);
      }
    }
  });

  test('a worker killed with SIGKILL is forked again and reads the tier with the bans its primary journaled', async () => {
    const pid = child.pid!;
    const victims = await workerPids(pid);
    assert.equal(victims.length, 2);
    for (const victim of victims) process.kill(victim, 'SIGKILL');
    await until('both workers forked again', async () => {
      const now = await workerPids(pid);
      return now.length === 2 && now.every((worker) => !victims.includes(worker)) && (await fetchRaw(`${adminUrl}/readyz`)).status === 200;
    });
    await sleep(500);
    // The new workers start with empty hot tiers: what they serve of /shared comes from the warm tier.
    for (const answer of await Promise.all(Array.from({ length: BURST }, () => get('/shared')))) assert.deepEqual(answer, { cache: 'HIT', fetch: 1 });
    // The banned warm copy is still on disk (bans are swept from the warm tier lazily): the new
    // workers know the ban from their primary's journal.
    assert.ok((await tiers()).warm.entries >= 3, 'the banned copy is still in the warm tier');
    for (const answer of await Promise.all(Array.from({ length: BURST }, () => get('/banned/b')))) {
      assert.ok(answer.fetch > fetchesAtBan, `a restarted worker served fetch ${answer.fetch}, which a ban hides (${answer.cache})`);
    }
  });

  test('after the primary is killed with SIGKILL, a new start serves what the tier held', async () => {
    await killWithWorkers(child);
    const fetchesBefore = origin.requests.length;
    await startSvc();
    for (const answer of await Promise.all(Array.from({ length: BURST }, () => get('/shared')))) assert.deepEqual(answer, { cache: 'HIT', fetch: 1 });
    assert.equal(origin.requests.length, fetchesBefore, 'nothing was fetched again');
  });
});
