// The worker supervisor with real worker threads on one shared port (SO_REUSEPORT): every worker
// serves, a dead worker is started again while the others serve, a crash loop backs off, stop ends
// every worker (terminating one that does not stop), and a call reaches every worker before it
// resolves (a worker that hangs or fails is terminated, one that exits is counted as gone). This
// thread is the main one; the workers run test/support/workers/test-worker.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { WorkerSupervisor, type WorkerSupervisorOptions } from '../../../src/node/workers/worker-supervisor.js';
import { createLogger } from '../../../src/observe/logger.js';
import { eventually } from '../../support/eventually.js';
import { LogCapture } from '../../support/svc-harness.js';
import { freePort } from '../../../bench/support/free-port.js';

const WORKER = new URL('../../support/workers/test-worker.js', import.meta.url);
/** Workers start in a thread of their own: on a loaded machine that takes seconds. */
const WAIT = { timeoutMs: 20_000, everyMs: 20 };

interface Started {
  supervisor: WorkerSupervisor;
  url: string;
  logs: LogCapture;
  output: string[];
}

async function startWorkers(options: Partial<WorkerSupervisorOptions> & { crashFile?: string; hangOnStop?: boolean } = {}): Promise<Started> {
  const port = await freePort();
  const logs = new LogCapture();
  const output: string[] = [];
  const supervisor = new WorkerSupervisor({
    workers: 2,
    module: WORKER,
    data: () => ({ port, crashFile: options.crashFile, hangOnStop: options.hangOnStop }),
    logger: createLogger({ destination: logs }),
    output: { write: (line) => void output.push(line) },
    backoff: { firstDelayMs: 20, maxDelayMs: 5_000, stableAfterMs: 60_000 },
    stopTimeoutMs: 3_000,
    ...options,
  });
  await supervisor.start();
  return { supervisor, url: `http://127.0.0.1:${port}`, logs, output };
}

async function get(url: string): Promise<{ thread: number; cached: boolean }> {
  const response = await request(url);
  return (await response.body.json()) as { thread: number; cached: boolean };
}

/** The threads that answered `tries` requests, each on a new connection (the workers close them). */
async function answeringThreads(url: string, tries = 20): Promise<Set<number>> {
  const threads = new Set<number>();
  for (let i = 0; i < tries; i++) threads.add((await get(url)).thread);
  return threads;
}

/** Whether the supervisor still runs a worker on thread `id`. */
function running(supervisor: WorkerSupervisor, id: number): boolean {
  return supervisor.threadIds().includes(id);
}

test('every worker serves the one port, and stop ends them all', async () => {
  const { supervisor, url } = await startWorkers();
  const threads = supervisor.threadIds() as number[];
  assert.equal(supervisor.readyCount, 2);
  assert.deepEqual(await answeringThreads(url), new Set(threads));
  await supervisor.stop();
  assert.deepEqual(supervisor.threadIds(), [undefined, undefined]);
});

test('a worker that dies is started again and logged, and the others serve meanwhile', async () => {
  const { supervisor, url, logs } = await startWorkers();
  try {
    const [victim, survivor] = supervisor.threadIds() as [number, number];
    await supervisor.terminate(0);
    await eventually('the dead worker to be noticed', () => supervisor.readyCount, (ready) => ready === 1, WAIT);
    // Until its replacement serves, every request is answered by the other worker.
    assert.deepEqual(await answeringThreads(url, 5), new Set([survivor]));
    await eventually('the replacement to serve', () => supervisor.readyCount, (ready) => ready === 2, WAIT);
    const replacement = supervisor.threadIds()[0];
    assert.ok(replacement !== undefined && replacement !== victim);
    assert.deepEqual(await answeringThreads(url), new Set([replacement, survivor]));
    const exited = await logs.find('the exit logged', (line) => line.msg === 'data-plane worker exited: starting it again');
    assert.equal(exited.thread, victim);
    assert.equal(exited.code, 1);
    assert.equal(supervisor.restarts, 1);
  } finally {
    await supervisor.stop();
  }
});

test('a worker that keeps dying is started again after a wait that doubles', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-workers-'));
  const crashFile = join(dir, 'crash');
  const { supervisor, logs } = await startWorkers({ crashFile });
  try {
    await writeFile(crashFile, '');
    await supervisor.terminate(0);
    const delays = (): number[] => logs.lines.filter((line) => line.worker === 0 && line.restart_in_ms !== undefined).map((line) => line.restart_in_ms as number);
    await eventually('four restarts', delays, (waits) => waits.length >= 4, WAIT);
    assert.deepEqual(delays().slice(0, 4), [20, 40, 80, 160]);
    assert.equal(supervisor.readyCount, 1, 'the other worker serves throughout');
    await rm(crashFile);
    await eventually('the worker to serve again once it can', () => supervisor.readyCount, (ready) => ready === 2, WAIT);
  } finally {
    await supervisor.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a worker that does not stop in time is terminated', async () => {
  const { supervisor } = await startWorkers({ hangOnStop: true, stopTimeoutMs: 500 });
  const started = Date.now();
  await supervisor.stop();
  assert.ok(Date.now() - started < 5_000, 'stop ended after its timeout');
  assert.deepEqual(supervisor.threadIds(), [undefined, undefined]);
});

test('a worker that exits before it serves fails the start', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-workers-'));
  const crashFile = join(dir, 'crash');
  await writeFile(crashFile, '');
  try {
    await assert.rejects(startWorkers({ crashFile }), /exited before it served \(code 3\)/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a call resolves once every worker applied it: no worker answers from what was purged', async () => {
  const { supervisor, url } = await startWorkers();
  try {
    // 20 new connections: the kernel spreads them by a hash, so both workers answer (all on one:
    // 1 chance in 2^19; with 4, as before, 1 in 8, and the test failed so in a full run).
    assert.equal((await answeringThreads(url)).size, 2);
    for (let i = 0; i < 4; i++) assert.equal((await get(`${url}/a`)).cached, true);
    const outcome = await supervisor.calls.call('invalidate', { type: 'purge', url: '/a' }, { onFailure: 'terminate' });
    assert.deepEqual(new Set(outcome.answers), new Set(supervisor.threadIds()));
    assert.deepEqual({ gone: outcome.gone, failed: outcome.failed }, { gone: 0, failed: [] });
    // Right after the answer, through every worker: never held any more.
    const seen = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const answer = await get(`${url}/a`);
      seen.add(answer.thread);
      assert.equal(answer.cached, false, `worker ${answer.thread} still holds /a`);
    }
    assert.equal(seen.size, 2);
    assert.equal((await get(`${url}/b`)).cached, true);
  } finally {
    await supervisor.stop();
  }
});

test('a worker that does not answer in time, or fails, is terminated: it may have missed the change', async () => {
  const { supervisor } = await startWorkers();
  try {
    const before = supervisor.threadIds() as number[];
    const hung = await supervisor.calls.call('invalidate', { type: 'purge', url: 'hang' }, { onFailure: 'terminate', timeoutMs: 300 });
    assert.equal(hung.failed.length, 2);
    assert.match(hung.failed[0]!.reason, /no answer to invalidate within 300 ms/);
    await eventually('the workers that hung to be terminated', () => supervisor.threadIds(), (ids) => before.every((id) => !ids.includes(id)), WAIT);
    await eventually('their replacements', () => supervisor.readyCount, (ready) => ready === 2, WAIT);
    const failing = supervisor.threadIds() as number[];
    const failed = await supervisor.calls.call('invalidate', { type: 'purge', url: 'fail' }, { onFailure: 'terminate' });
    assert.deepEqual(failed.failed.map((failure) => failure.reason), ['internal: refused on purpose', 'internal: refused on purpose']);
    await eventually('the workers that failed to be terminated', () => supervisor.threadIds(), (ids) => failing.every((id) => !ids.includes(id)), WAIT);
    await eventually('their replacements', () => supervisor.readyCount, (ready) => ready === 2, WAIT);
    // Gathering figures only reports a worker that does not answer.
    const reporting = supervisor.threadIds() as number[];
    const reported = await supervisor.calls.call('invalidate', { type: 'purge', url: 'hang' }, { onFailure: 'report', timeoutMs: 200 });
    assert.equal(reported.failed.length, 2);
    assert.ok(reporting.every((id) => running(supervisor, id)));
  } finally {
    await supervisor.stop();
  }
});

test('a worker that exits while a call waits for it is counted as gone', async () => {
  const { supervisor } = await startWorkers();
  try {
    const [, other] = supervisor.threadIds() as [number, number];
    const waiting = supervisor.calls.call('invalidate', { type: 'purge', url: 'hang' }, { onFailure: 'report', timeoutMs: 3_000 });
    await supervisor.terminate(0);
    const outcome = await waiting;
    assert.equal(outcome.gone, 1);
    assert.equal(outcome.failed.length, 1, 'the other worker, which hangs, is reported');
    assert.ok(running(supervisor, other));
  } finally {
    await supervisor.stop();
  }
});
