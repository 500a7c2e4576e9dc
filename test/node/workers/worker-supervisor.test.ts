// The worker supervisor with real worker processes (node:cluster) on one shared port: every worker
// serves, a dead worker is forked again while the others serve, a crash loop backs off, stop ends
// every worker (killing one that does not stop), and a call reaches every worker before it resolves
// (a worker that hangs or fails is killed, one that exits is counted as gone). This process is the
// primary; the workers run test/support/workers/test-worker.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { WorkerSupervisor, type WorkerSupervisorOptions } from '../../../src/node/workers/worker-supervisor.js';
import { createLogger } from '../../../src/observe/logger.js';
import { LogCapture } from '../../support/svc-harness.js';
import { freePort } from '../../support/free-port.js';

const WORKER = fileURLToPath(new URL('../../support/workers/test-worker.js', import.meta.url));

interface Started {
  supervisor: WorkerSupervisor;
  url: string;
  logs: LogCapture;
  output: string[];
}

async function startWorkers(options: Partial<WorkerSupervisorOptions> & { env?: Record<string, string> } = {}): Promise<Started> {
  const port = await freePort();
  const logs = new LogCapture();
  const output: string[] = [];
  const supervisor = await WorkerSupervisor.start({
    workers: 2,
    exec: WORKER,
    logger: createLogger({ destination: logs }),
    output: { write: (line) => void output.push(line) },
    distribution: 'round-robin',
    backoff: { firstDelayMs: 20, maxDelayMs: 5_000, stableAfterMs: 60_000 },
    stopTimeoutMs: 3_000,
    ...options,
    env: { TEST_PORT: String(port), ...options.env },
  });
  return { supervisor, url: `http://127.0.0.1:${port}`, logs, output };
}

async function get(url: string): Promise<{ pid: number; cached: boolean }> {
  const response = await request(url);
  return (await response.body.json()) as { pid: number; cached: boolean };
}

/** The pids that answered `tries` requests, each on a new connection (the workers close them). */
async function answeringPids(url: string, tries = 20): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < tries; i++) pids.add((await get(url)).pid);
  return pids;
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('every worker serves the one port, and stop ends them all', async () => {
  const { supervisor, url } = await startWorkers();
  const pids = supervisor.pids() as number[];
  assert.equal(supervisor.readyCount, 2);
  assert.deepEqual(await answeringPids(url), new Set(pids));
  await supervisor.stop();
  await until(() => pids.every((pid) => !isAlive(pid)), 'the workers to exit');
});

test('a worker that dies is forked again and logged, and the others serve meanwhile', async () => {
  const { supervisor, url, logs } = await startWorkers();
  try {
    const [victim, survivor] = supervisor.pids() as [number, number];
    process.kill(victim, 'SIGKILL');
    await until(() => supervisor.readyCount === 1, 'the dead worker to be noticed');
    // Until its replacement serves, every request is answered by the other worker.
    assert.deepEqual(await answeringPids(url, 5), new Set([survivor]));
    await until(() => supervisor.readyCount === 2, 'the replacement to serve');
    const replacement = supervisor.pids()[0];
    assert.ok(replacement !== undefined && replacement !== victim);
    assert.deepEqual(await answeringPids(url), new Set([replacement, survivor]));
    const exited = logs.lines.find((line) => line.msg === 'data-plane worker exited: forking it again');
    assert.equal(exited?.pid, victim);
    assert.equal(exited?.signal, 'SIGKILL');
    assert.equal(supervisor.restarts, 1);
  } finally {
    await supervisor.stop();
  }
});

test('a worker that keeps dying is forked again after a wait that doubles', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-workers-'));
  const crashFile = join(dir, 'crash');
  const { supervisor, logs } = await startWorkers({ env: { TEST_CRASH_FILE: crashFile } });
  try {
    await writeFile(crashFile, '');
    process.kill(supervisor.pids()[0]!, 'SIGKILL');
    const delays = (): number[] => logs.lines.filter((line) => line.worker === 0 && line.restart_in_ms !== undefined).map((line) => line.restart_in_ms as number);
    await until(() => delays().length >= 4, 'four restarts');
    assert.deepEqual(delays().slice(0, 4), [20, 40, 80, 160]);
    assert.equal(supervisor.readyCount, 1, 'the other worker serves throughout');
    await rm(crashFile);
    await until(() => supervisor.readyCount === 2, 'the worker to serve again once it can');
  } finally {
    await supervisor.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a worker that does not stop in time is killed', async () => {
  const { supervisor } = await startWorkers({ env: { TEST_HANG_ON_STOP: '1' }, stopTimeoutMs: 500 });
  const pids = supervisor.pids() as number[];
  await supervisor.stop();
  await until(() => pids.every((pid) => !isAlive(pid)), 'the workers to be killed');
});

test('a worker that exits before it serves fails the start', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-workers-'));
  const crashFile = join(dir, 'crash');
  await writeFile(crashFile, '');
  try {
    await assert.rejects(startWorkers({ env: { TEST_CRASH_FILE: crashFile } }), /exited before it served \(code 3\)/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a call resolves once every worker applied it: no worker answers from what was purged', async () => {
  const { supervisor, url } = await startWorkers();
  try {
    assert.ok([...(await answeringPids(url, 4))].length === 2);
    for (let i = 0; i < 4; i++) assert.equal((await get(`${url}/a`)).cached, true);
    const outcome = await supervisor.calls.call<number>('purge', '/a', { onFailure: 'kill' });
    assert.deepEqual(new Set(outcome.answers), new Set(supervisor.pids()));
    assert.deepEqual({ gone: outcome.gone, failed: outcome.failed }, { gone: 0, failed: [] });
    // Right after the answer, through every worker: never held any more.
    const seen = new Set<number>();
    for (let i = 0; i < 10; i++) {
      const answer = await get(`${url}/a`);
      seen.add(answer.pid);
      assert.equal(answer.cached, false, `worker ${answer.pid} still holds /a`);
    }
    assert.equal(seen.size, 2);
    assert.equal((await get(`${url}/b`)).cached, true);
  } finally {
    await supervisor.stop();
  }
});

test('a worker that does not answer in time, or fails, is killed: it may have missed the change', async () => {
  const { supervisor } = await startWorkers();
  try {
    const before = supervisor.pids() as number[];
    const hung = await supervisor.calls.call('hang', null, { onFailure: 'kill', timeoutMs: 300 });
    assert.equal(hung.failed.length, 2);
    assert.match(hung.failed[0]!.reason, /no answer to hang within 300 ms/);
    await until(() => before.every((pid) => !isAlive(pid)), 'the workers that hung to be killed');
    await until(() => supervisor.readyCount === 2, 'their replacements');
    const failing = supervisor.pids() as number[];
    const failed = await supervisor.calls.call('fail', null, { onFailure: 'kill' });
    assert.deepEqual(failed.failed.map((failure) => failure.reason), ['refused on purpose', 'refused on purpose']);
    await until(() => failing.every((pid) => !isAlive(pid)), 'the workers that failed to be killed');
    await until(() => supervisor.readyCount === 2, 'their replacements');
    // Gathering figures only reports a worker that does not answer.
    const reporting = supervisor.pids() as number[];
    const reported = await supervisor.calls.call('hang', null, { onFailure: 'report', timeoutMs: 200 });
    assert.equal(reported.failed.length, 2);
    assert.ok(reporting.every(isAlive));
  } finally {
    await supervisor.stop();
  }
});

test('a worker that exits while a call waits for it is counted as gone', async () => {
  const { supervisor } = await startWorkers();
  try {
    const [victim, other] = supervisor.pids() as [number, number];
    const waiting = supervisor.calls.call('hang', null, { onFailure: 'report', timeoutMs: 3_000 });
    process.kill(victim, 'SIGKILL');
    const outcome = await waiting;
    assert.equal(outcome.gone, 1);
    assert.equal(outcome.failed.length, 1, 'the other worker, which hangs, is reported');
    assert.ok(isAlive(other));
  } finally {
    await supervisor.stop();
  }
});
