// SIGTERM always ends `svc serve` in time (issue 29 item 4): busy requests get the stop's grace
// (STOP_GRACE_MS), and the process group is gone within the grace + 5 s, whatever the origin does.
// A start while the previous instance still stops fails at once, naming the admin port (the first
// listener a node opens and the last it closes), or, once that instance has released it, serves;
// a SIGTERM during a start ends it at once. No run leaves a process behind.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { fetchRaw } from '../support/http.js';
import { eventually } from '../support/eventually.js';
import { CLI, killProcess, serveSetup } from '../support/workers/serve-process.js';
import { STOP_GRACE_MS } from '../../src/node/listeners.js';

/** The bound the issue sets: the stop's grace (its drain of busy requests), then 5 s. */
const STOP_BOUND_MS = STOP_GRACE_MS + 5_000;
const TOKEN = 'sigterm-stop-token-0123456789';

/** An origin whose /slow sends its head, then a byte a second, for longer than any bound here. */
async function startTrickleOrigin(): Promise<{ url: string; slowAsked: () => number; close: () => Promise<void> }> {
  let slowAsked = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    if (req.url !== '/slow') {
      res.end('ok');
      return;
    }
    slowAsked++;
    res.writeHead(200, { 'cache-control': 'max-age=60', 'content-length': '100000' });
    const timer = setInterval(() => res.write('x'), 1_000);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    slowAsked: () => slowAsked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Serve {
  process: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  stderr: () => string;
}

describe('SIGTERM stops svc serve in time', { timeout: 120_000 }, () => {
  let origin: Awaited<ReturnType<typeof startTrickleOrigin>>;
  let dir: string;
  let configFile: string;
  let dataUrl: string;
  let adminUrl: string;
  let adminPort: number;
  const started: Serve[] = [];

  before(async () => {
    // A process group of its own outlives the test run unless killed: even a run cut short kills them.
    process.once('exit', () => {
      for (const serve of started) if (serve.process.exitCode === null && serve.process.signalCode === null) serve.process.kill('SIGKILL');
    });
    origin = await startTrickleOrigin();
    ({ dir, configFile, dataUrl, adminUrl, adminPort } = await serveSetup({ originUrl: origin.url, token: TOKEN, warmMaxBytes: 10_000_000 }));
  });

  after(async () => {
    for (const serve of started) await killProcess(serve.process);
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts `svc serve` as the leader of a process group of its own, so the test can tell the group is gone. */
  function spawnServe(): Serve {
    // Its temporary files (the threads' sockets) in the test's directory: a start cut short leaves them behind.
    const child = spawn(process.execPath, [CLI, 'serve', '--config', configFile], { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, TMPDIR: dir } });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null, atMs: Date.now() }));
    const serve = { process: child, exited, stderr: () => stderr };
    started.push(serve);
    return serve;
  }

  const ready = (): Promise<boolean> => fetchRaw(`${adminUrl}/readyz`).then((answer) => answer.status === 200, () => false);

  /** Whether any process of the group `serve` leads is still there. */
  function groupAlive(serve: Serve): boolean {
    try {
      process.kill(-serve.process.pid!, 0);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw error;
    }
  }

  /** A request that keeps the node busy: resolves once the origin is asked, with the client's outcome to come. */
  async function busyRequest(): Promise<{ outcome: Promise<string> }> {
    const asked = origin.slowAsked();
    const outcome = request(`${dataUrl}/slow`, { headersTimeout: 60_000, bodyTimeout: 60_000 }).then(
      async (answer) => `answered ${answer.statusCode}, body ${await answer.body.text().then((body) => `${body.length} bytes`, (error: Error) => `cut (${error.message})`)}`,
      (error: Error) => `failed (${error.message})`,
    );
    await eventually('the origin asked for /slow', () => origin.slowAsked(), (count) => count > asked);
    return { outcome };
  }

  async function startReady(): Promise<Serve> {
    const serve = spawnServe();
    await eventually('svc ready', ready, (isReady) => isReady, { timeoutMs: 30_000, everyMs: 20 });
    return serve;
  }

  test('with a request in flight to an origin that never finishes, the process group is gone within the grace + 5 s', async (t) => {
    const serve = await startReady();
    const client = await busyRequest();
    const signalledMs = Date.now();
    serve.process.kill('SIGTERM');
    // Out of rotation at once: load balancers stop sending what the closed listener would refuse.
    await eventually('/readyz 503 while it stops', () => fetchRaw(`${adminUrl}/readyz`).then((answer) => answer.status, () => 0), (status) => status === 503);
    const { code, signal, atMs } = await serve.exited;
    const tookMs = atMs - signalledMs;
    t.diagnostic(`exited ${tookMs} ms after SIGTERM (bound ${STOP_BOUND_MS} ms); the busy client: ${await client.outcome}`);
    assert.ok(tookMs < STOP_BOUND_MS, `exited within ${STOP_BOUND_MS} ms (took ${tookMs})`);
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'a clean stop, not the deadline');
    assert.equal(groupAlive(serve), false, 'no process of its group is left');
    assert.equal(serve.stderr(), '');
  });

  test('a start while the previous instance still stops fails at once naming the admin port, or serves; a start signalled at once ends; all within bounds', async (t) => {
    const first = await startReady();
    await busyRequest();
    const signalledMs = Date.now();
    first.process.kill('SIGTERM');
    // Both started while the first still holds its ports (its busy request keeps it in the grace).
    const second = spawnServe();
    const third = spawnServe();
    third.process.kill('SIGTERM');

    const thirdExit = await third.exited;
    t.diagnostic(`signalled during its start: exited after ${thirdExit.atMs - signalledMs} ms (${thirdExit.signal ?? `code ${thirdExit.code}`})`);
    assert.ok(thirdExit.atMs - signalledMs < STOP_BOUND_MS);

    // The first answers /readyz until it exits: the second's readiness is looked for only after that.
    let decided = false;
    const secondReady = first.exited.then(() => eventually('the second ready', async () => decided || (await ready()), (isReady) => isReady, { timeoutMs: 30_000, everyMs: 20 }));
    const outcome = await Promise.race([second.exited.then(() => 'failed' as const), secondReady.then(() => 'serves' as const)]);
    decided = true;
    await secondReady;
    const firstExit = await first.exited;
    t.diagnostic(`the first exited ${firstExit.atMs - signalledMs} ms after SIGTERM; the second ${outcome === 'failed' ? `failed after ${(await second.exited).atMs - signalledMs} ms: ${second.stderr().trim()}` : 'serves'}`);
    assert.ok(firstExit.atMs - signalledMs < STOP_BOUND_MS, 'the first exited within the bound');
    assert.deepEqual({ code: firstExit.code, signal: firstExit.signal }, { code: 0, signal: null });
    if (outcome === 'failed') {
      assert.equal((await second.exited).code, 1);
      assert.deepEqual(second.stderr().trim().split('\n'), [`svc: admin.listen: the admin listener cannot open 127.0.0.1:${adminPort}: address already in use (EADDRINUSE)`]);
    } else {
      assert.equal((await fetchRaw(`${dataUrl}/fast`)).status, 200, 'the second serves');
      const secondSignalledMs = Date.now();
      second.process.kill('SIGTERM');
      const { code, atMs } = await second.exited;
      assert.equal(code, 0);
      assert.ok(atMs - secondSignalledMs < STOP_BOUND_MS);
    }
    for (const serve of [first, second, third]) assert.equal(groupAlive(serve), false, `no process of pid ${serve.process.pid}'s group is left`);
  });
});
