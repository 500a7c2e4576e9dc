// `svc serve` as an operator runs it, with the defaults (one data-plane thread per core) and a warm
// tier: a real process, requests each on a connection of its own so that the kernel spreads them over
// the threads. The origin numbers its answers, so a body tells which fetch it came from: after a purge
// or a ban, no answer may carry a body fetched before it, from any thread or tier.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestOrigin, type TestOrigin } from '../../support/test-origin.js';
import { freePort } from '../../../bench/support/free-port.js';
import { fetchRaw, rawHttpGet } from '../../support/http.js';
import { eventually } from '../../support/eventually.js';
import { CLI, killProcess, untilWarmSynced } from '../../support/workers/serve-process.js';

const TOKEN = 'serve-threads-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
/** Fresh connections per look: with two threads, the chance that all land on one is 2^-31. */
const SPREAD = 32;

interface Tiers {
  hot: { entries: number };
  warm: { entries: number };
}

let origin: TestOrigin;
let dir: string;
let configFile: string;
let child: ChildProcess;
let output = '';
let dataUrl: string;
let adminUrl: string;

async function tiers(): Promise<Tiers> {
  return (JSON.parse((await fetchRaw(`${adminUrl}/v1/stats`, { headers: AUTH })).body) as { tiers: Tiers }).tiers;
}

/** `SPREAD` requests for `path` at once, each on a connection of its own: each answer's X-Cache and fetch number. */
async function spread(path: string): Promise<{ cache: string; fetch: number }[]> {
  const answers = await Promise.all(Array.from({ length: SPREAD }, () => rawHttpGet(`${dataUrl}${path}`, {})));
  return answers.map((answer) => ({ cache: String(answer.headers['x-cache']), fetch: Number(answer.body.split(' ')[1]) }));
}

async function startServe(): Promise<void> {
  output = '';
  child = spawn(process.execPath, [CLI, 'serve', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN } });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await eventually('svc ready', () => fetchRaw(`${adminUrl}/readyz`).then((answer) => answer.status, () => 0), (status) => status === 200, { timeoutMs: 30_000, everyMs: 50 });
  await eventually('the warm tier indexed', () => output.includes('"msg":"warm tier indexed"'), (indexed) => indexed, { timeoutMs: 30_000 });
}

describe('svc serve with the defaults: one cache served by every thread', () => {
  before(async () => {
    let fetches = 0;
    origin = await startTestOrigin((request) => ({ status: request.url === '/logged' ? 404 : 200, headers: { 'cache-control': 'max-age=300', 'surrogate-key': 'tagged' }, body: `fetch ${++fetches}` }));
    dir = await mkdtemp(join(tmpdir(), 'svc-threads-'));
    const [dataPort, adminPort] = [await freePort(), await freePort()];
    dataUrl = `http://127.0.0.1:${dataPort}`;
    adminUrl = `http://127.0.0.1:${adminPort}`;
    configFile = join(dir, 'svc.yaml');
    await writeFile(
      configFile,
      `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\nwarm: { path: "${join(dir, 'warm')}", max_bytes: 10000000 }\n` +
        `pools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n`,
    );
    await startServe();
  });

  after(async () => {
    await killProcess(child);
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('ready with one thread per core, which it says', async () => {
    const detail = JSON.parse((await fetchRaw(`${adminUrl}/readyz?detail=1`)).body) as { conditions: { name: string; reason: string }[] };
    assert.match(detail.conditions.find((condition) => condition.name === 'data_listener_bound')!.reason, new RegExp(`\\(${availableParallelism()} threads\\)$`));
  });

  test('an object fetched once is a HIT on every connection, whichever thread takes it, and is held once', async () => {
    assert.deepEqual(await spread('/shared').then((answers) => new Set(answers.map((answer) => answer.fetch))), new Set([1]), 'every answer is the one fetch');
    assert.equal(origin.requests.filter((request) => request.url === '/shared').length, 1);
    for (const answer of await spread('/shared')) assert.equal(answer.cache, 'HIT');
    assert.equal((await tiers()).hot.entries, 1);
  });

  test('a purge answered by the admin API leaves no thread serving the object, from either tier', async () => {
    const before = Date.now();
    await spread('/purged');
    await untilWarmSynced(adminUrl, before);
    const fetchesBefore = origin.requests.length;
    const purge = await fetchRaw(`${adminUrl}/v1/purge`, { method: 'POST', headers: AUTH, body: JSON.stringify({ url: `${dataUrl}/purged` }) });
    assert.equal(purge.status, 200);
    for (const answer of await spread('/purged')) assert.ok(answer.fetch > fetchesBefore, `fetch ${answer.fetch}, made before the purge (${answer.cache})`);
  });

  test('a ban answered by the admin API hides the object in every thread, warm copies included', async () => {
    const before = Date.now();
    await spread('/banned');
    await untilWarmSynced(adminUrl, before);
    const fetchesBefore = origin.requests.length;
    const ban = await fetchRaw(`${adminUrl}/v1/ban`, { method: 'POST', headers: AUTH, body: JSON.stringify({ path_regex: '^/banned$' }) });
    assert.equal(ban.status, 200);
    for (const answer of await spread('/banned')) assert.ok(answer.fetch > fetchesBefore, `fetch ${answer.fetch}, made before the ban (${answer.cache})`);
  });

  test('/metrics counts each request once, under the names and labels of one process', async () => {
    const before = (await fetchRaw(`${adminUrl}/metrics`)).body;
    const hits = (text: string): number =>
      [...text.matchAll(/^svc_requests_total\{[^}]*cache_result="HIT"[^}]*route="all"\} (\d+)$/gm)].reduce((sum, line) => sum + Number(line[1]), 0);
    await spread('/shared');
    const after = (await fetchRaw(`${adminUrl}/metrics`)).body;
    assert.equal(hits(after) - hits(before), SPREAD);
    assert.equal(after.match(/^svc_startup_phase\{phase="log_replay"\} /gm)?.length, 1, 'the main thread alone says its startup phases');
  });

  test('the access log lines of every thread reach standard output, one per request, and SIGTERM stops the process cleanly', async () => {
    const answers = await spread('/logged');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
    const lines = output.split('\n').filter((line) => line.includes('"msg":"access"') && line.includes('"path":"/logged"'));
    assert.equal(lines.length, answers.length);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `a whole line: ${line}`);
  });

  test('after a SIGKILL, a new start serves what the warm tier held', async () => {
    await startServe();
    const before = Date.now();
    const kept = await spread('/kept');
    await untilWarmSynced(adminUrl, before);
    await killProcess(child);
    await startServe();
    for (const answer of await spread('/kept')) assert.equal(answer.fetch, kept[0]!.fetch, `served from the warm tier (${answer.cache})`);
  });
});

test('svc serve whose data port is taken exits 1 at once, naming the listener and the address', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-threads-'));
  const [dataPort, adminPort] = [await freePort(), await freePort()];
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(dataPort, '127.0.0.1', resolve));
  try {
    const config = join(dir, 'svc.yaml');
    await writeFile(config, `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\npools: [{ name: o, upstreams: ["http://127.0.0.1:1"] }]\nroutes: [{ name: all, pool: o }]\n`);
    const failing = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN } });
    let stderr = '';
    failing.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => failing.kill('SIGKILL'), 30_000);
    const [code] = (await once(failing, 'exit')) as [number | null];
    clearTimeout(killer);
    assert.equal(code, 1, 'svc exits by itself, not killed');
    assert.deepEqual(stderr.trim().split('\n'), [`svc: listen: the data-plane listener cannot open 127.0.0.1:${dataPort}: address already in use (EADDRINUSE)`]);
  } finally {
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
});
