// Zero-downtime upgrade (issue 29 item 5): `svc serve` on the defaults (a data-plane thread per
// core, a warm tier), started as an operator starts it, gets SIGUSR2 under load from keep-alive
// connections and a stream of new ones. The successor takes over and the old process exits with no
// request failed and no connection refused or reset; both processes answered; what the warm tier held
// before is served by the successor from it, byte-exact, without asking the origin. A successor that
// cannot start (its configuration made invalid first) leaves the old process serving, under load too;
// one that fails after it took the warm directory leaves it serving too, and a next upgrade succeeds.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { fetchRaw } from '../support/http.js';
import { eventually } from '../support/eventually.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startLoad, type LoadReport } from '../support/load-generator.js';
import { CLI, serveSetup, untilWarmSynced } from '../support/workers/serve-process.js';

const TOKEN = 'upgrade-test-token-0123456789';
const WARM_OBJECTS = 20;
const LOAD_PATHS = Array.from({ length: 50 }, (_, i) => `/load/${i}`);
const LOAD = { keepAliveConnections: 4, newConnectionStreams: 2, maxMs: 120_000, requestTimeoutMs: 20_000 };

type LogLine = Record<string, unknown>;

/** The bytes the origin serves for `path`: different for every path, the same every time. */
function bodyOf(path: string): Buffer {
  const size = path.startsWith('/warm/') ? 30_000 : 200;
  const seed = createHash('sha256').update(path).digest();
  return Buffer.alloc(size, seed);
}

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

function failures(report: LoadReport): number {
  return Object.values(report.failures).reduce((sum, count) => sum + count, 0) + Object.entries(report.statuses).filter(([status]) => status !== '200').reduce((sum, [, count]) => sum + count, 0);
}

describe('svc serve upgrades without downtime on SIGUSR2', { timeout: 240_000 }, () => {
  let origin: TestOrigin;
  let dir: string;
  let configFile: string;
  let dataUrl: string;
  let adminUrl: string;
  let serve: ChildProcess;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let stderr = '';
  /** The process that serves once the successful upgrade is over. */
  let servingPid: number | undefined;
  const warmPaths = Array.from({ length: WARM_OBJECTS }, (_, i) => `/warm/${i}`);
  /** Every log line of the node's processes: a successor writes to its predecessor's standard output. */
  const lines: LogLine[] = [];

  /** The first line `match` accepts among those logged since line `since`, once it has come. */
  const line = (what: string, since: number, match: (line: LogLine) => boolean, timeoutMs = 90_000): Promise<LogLine> =>
    eventually(what, () => lines.slice(since).find(match), (found) => found !== undefined, { timeoutMs, everyMs: 50 }) as Promise<LogLine>;
  const ready = (): Promise<number> => fetchRaw(`${adminUrl}/readyz`).then((answer) => answer.status, () => 0);
  const admin = async (path: string, options: { method?: string; body?: string } = {}): Promise<string> =>
    (await fetchRaw(`${adminUrl}${path}`, { ...options, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } })).body;
  const askedFor = (prefix: string): number => origin.requests.filter((asked) => asked.url.startsWith(prefix)).length;

  before(async () => {
    origin = await startTestOrigin((asked) => ({ headers: { 'cache-control': 'max-age=600' }, body: bodyOf(asked.url ?? '/') }));
    ({ dir, configFile, dataUrl, adminUrl } = await serveSetup({ originUrl: origin.url, token: TOKEN, warmMaxBytes: 50_000_000 }));
    // test/run.ts's one-thread pass (SVC_TEST_WORKERS=1): the single-thread node hands its socket over too.
    if (process.env.SVC_TEST_WORKERS !== undefined) await writeFile(configFile, `${await readFile(configFile, 'utf8')}workers: ${Number(process.env.SVC_TEST_WORKERS)}\n`);
    // A process group of its own, which the successor joins: the test ends every process of it.
    serve = spawn(process.execPath, [CLI, 'serve', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, TMPDIR: dir } });
    process.once('exit', () => killGroup());
    exited = once(serve, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
    serve.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    createInterface({ input: serve.stdout! }).on('line', (text) => {
      if (text.startsWith('{')) lines.push(JSON.parse(text) as LogLine);
    });
    await eventually('svc ready', ready, (status) => status === 200, { timeoutMs: 60_000, everyMs: 50 });
  });

  function killGroup(): void {
    try {
      process.kill(-serve.pid!, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  }

  after(async () => {
    killGroup();
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a successor that cannot start leaves the old process serving, with no request failed', async (t) => {
    const good = await readFile(configFile, 'utf8');
    await writeFile(configFile, good.replace(/^listen: .*$/m, 'listen: not-an-address'));
    const load = startLoad({ url: dataUrl, paths: LOAD_PATHS, ...LOAD });
    await eventually('load answered', () => load.report.requests, (count) => count >= 100, { timeoutMs: 30_000 });
    const since = lines.length;
    serve.kill('SIGUSR2');
    const failed = await line('the failed upgrade logged', since, (logged) => logged.msg === 'upgrade failed: the successor did not get to serve: this process serves on');
    const successor = Number(failed.successor);
    await eventually('the successor gone', () => alive(successor), (isAlive) => !isAlive);
    const before = load.report.requests;
    await eventually('load answered after the failure', () => load.report.requests, (count) => count >= before + 100, { timeoutMs: 30_000 });
    const report = await load.stop();
    await writeFile(configFile, good);
    t.diagnostic(`successor ${successor}: ${String(failed.reason)}; load ${JSON.stringify(report)}`);
    assert.equal(serve.exitCode, null, 'the old process serves on');
    assert.notEqual(successor, serve.pid);
    assert.equal(failures(report), 0, `no request failed: ${JSON.stringify(report)}`);
    assert.equal(await ready(), 200);
    assert.match(stderr, /listen/, "the successor's refusal of its configuration is on the node's standard error");
    stderr = '';
  });

  test('under load, the successor takes over: no request fails, no connection is refused, and the warm tier is handed over byte-exact', async (t) => {
    for (const path of warmPaths) assert.equal((await request(`${dataUrl}${path}`)).statusCode, 200);
    await untilWarmSynced(adminUrl, Date.now());
    const warmAsked = askedFor('/warm/');
    assert.equal(warmAsked, WARM_OBJECTS);

    const load = startLoad({ url: dataUrl, paths: LOAD_PATHS, ...LOAD });
    await eventually('load answered', () => load.report.requests, (count) => count >= 200, { timeoutMs: 30_000 });
    const beforeSignal = load.report.requests;
    const signalledMs = Date.now();
    const since = lines.length;
    serve.kill('SIGUSR2');
    const started = await line('the successor started', since, (logged) => logged.msg === 'upgrade: started a successor');
    const successor = Number(started.successor);
    const tookOver = await line('the successor took over', since, (logged) => logged.msg === 'upgrade: took over from the predecessor');
    const { code, signal } = await exited;
    const exitedMs = Date.now();
    await line('the old process said it exits', since, (logged) => logged.msg === 'upgrade: handed over to the successor: this process exits', 1_000);
    const atExit = load.report.requests;
    await eventually('load answered by the successor', () => load.report.requests, (count) => count >= atExit + 200, { timeoutMs: 30_000 });
    const report = await load.stop();
    t.diagnostic(`old ${serve.pid} exited ${exitedMs - signalledMs} ms after SIGUSR2; successor ${successor}; load ${JSON.stringify(report)}`);

    assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'the old process exits cleanly');
    assert.equal(tookOver.predecessor, serve.pid);
    assert.ok(alive(successor), 'the successor serves on');
    assert.equal(failures(report), 0, `no request failed, no connection refused or reset: ${JSON.stringify(report)}`);
    assert.ok(report.newConnections > 0);
    assert.ok(beforeSignal > 0, 'the old process answered');
    // The admin listener is the successor's now: its own count of answers, from zero at its start.
    const answeredBySuccessor = [...(await admin('/metrics')).matchAll(/^svc_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
    assert.ok(answeredBySuccessor >= 200, `the successor answered (${answeredBySuccessor})`);

    const indexed = async (): Promise<boolean | undefined> =>
      (JSON.parse(await admin('/readyz?detail=1')) as { conditions: { name: string; ready: boolean }[] }).conditions.find((condition) => condition.name === 'warm_store_indexed')?.ready;
    await eventually("the successor's warm tier indexed", indexed, (holds) => holds === true, { timeoutMs: 30_000, everyMs: 50 });
    for (const path of warmPaths) {
      const answer = await request(`${dataUrl}${path}`);
      const body = Buffer.from(await answer.body.arrayBuffer());
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers['x-cache'], 'HIT', `${path} from the warm tier`);
      assert.equal(sha(body), sha(bodyOf(path)), `${path} byte-exact`);
    }
    assert.equal(askedFor('/warm/'), warmAsked, 'the origin was not asked again for what the warm tier held');
    assert.equal(stderr, '');

    servingPid = successor;
  });

  test('a successor that fails after it took the warm directory leaves the process serving, its admin address open again, and the next upgrade succeeds', async (t) => {
    // The node is the successor of the test before now: not this test's child, but of its process group.
    const serving = servingPid!;
    const good = await readFile(configFile, 'utf8');
    // Valid, but its cluster port is taken (by the origin): the start fails after the handover.
    const port = new URL(origin.url).port;
    const cluster = `hop_limit: 2\ncluster: { mode: eventual, node_name: a, bind: "127.0.0.1:${port}", join: ["127.0.0.1:${port}"], secret: ${Buffer.alloc(32, 7).toString('base64')} }\n`;
    await writeFile(configFile, `${good}${cluster}`);
    let since = lines.length;
    process.kill(serving, 'SIGUSR2');
    const failed = await line('the late failure logged', since, (logged) => String(logged.msg).startsWith('upgrade failed after the successor took the warm directory'));
    await writeFile(configFile, good);
    t.diagnostic(`successor ${String(failed.successor)}: ${String(failed.reason)}`);
    assert.equal(failed.admin_reopened, true);
    assert.ok(alive(serving), 'the process serves on');
    assert.equal(await ready(), 200, 'its admin address answers again');
    assert.equal((await request(`${dataUrl}/load/0`)).statusCode, 200);
    assert.match(stderr, /EADDRINUSE/, "the successor's reason is on the node's standard error");

    // The configuration fixed, the next upgrade takes the directory the failed successor left.
    since = lines.length;
    process.kill(serving, 'SIGUSR2');
    const tookOver = await line('the next successor took over', since, (logged) => logged.msg === 'upgrade: took over from the predecessor');
    assert.equal(tookOver.predecessor, serving);
    await eventually('the process before gone', () => alive(serving), (isAlive) => !isAlive, { timeoutMs: 30_000, everyMs: 50 });
    for (const path of warmPaths) assert.equal((await request(`${dataUrl}${path}`)).headers['x-cache'], 'HIT', `${path} from the warm tier`);
    assert.equal((JSON.parse(await admin('/v1/purge', { method: 'POST', body: JSON.stringify({ url: `${dataUrl}/warm/0` }) })) as { status: string }).status, 'purged');
  });
});
