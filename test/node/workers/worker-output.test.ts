// What the workers of one node show as one: `/metrics` adds every worker's figures up with the
// names, labels and types of one process (counters, the traffic histogram bucket by bucket, the
// hand-made traffic series; the process's own figures once), and the workers' log lines reach one
// output whole, never interleaved, even when they are longer than a pipe writes at once. Real worker threads
// (test/support/workers/test-worker.ts); this thread is the main one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { WorkerSupervisor } from '../../../src/node/workers/worker-supervisor.js';
import { aggregatedExposition } from '../../../src/node/workers/worker-metrics.js';
import { NodeMetrics } from '../../../src/observe/metrics.js';
import { createLogger } from '../../../src/observe/logger.js';
import { eventually } from '../../support/eventually.js';
import { LogCapture } from '../../support/svc-harness.js';
import { freePort } from '../../../bench/support/free-port.js';

const WORKER = new URL('../../support/workers/test-worker.js', import.meta.url);

async function startWorkers(output: string[]): Promise<{ supervisor: WorkerSupervisor; url: string }> {
  const port = await freePort();
  const supervisor = new WorkerSupervisor({
    workers: 2,
    module: WORKER,
    data: () => ({ port }),
    logger: createLogger({ destination: new LogCapture() }),
    output: { write: (line) => void output.push(line) },
    stopTimeoutMs: 3_000,
  });
  await supervisor.start();
  return { supervisor, url: `http://127.0.0.1:${port}` };
}

/** The sample lines of an exposition (no comments), by series: `name{labels}` → value. */
function samples(exposition: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    found.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return found;
}

test('/metrics sums every worker under the names and labels of one process', async () => {
  const output: string[] = [];
  const { supervisor, url } = await startWorkers(output);
  try {
    const threads = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const response = await request(`${url}/${i % 3 === 0 ? 'a' : 'x'}`);
      threads.add(((await response.body.json()) as { thread: number }).thread);
    }
    assert.equal(threads.size, 2, 'both workers answered');
    // The primary's own registry says the startup phases; the workers leave theirs out.
    const primary = new NodeMetrics();
    const { body, missingWorkers } = await aggregatedExposition(supervisor.calls, primary.registry, false);
    assert.equal(missingWorkers, 0);
    const summed = samples(body);
    const series = (result: string, source: string): string =>
      `svc_requests_total{method="GET",status="200",cache_result="${result}",source="${source}",route="main"}`;
    assert.equal(summed.get(series('HIT', 'hot')), 10);
    assert.equal(summed.get(series('MISS', 'origin')), 20);
    const labels = 'method="GET",status="200",cache_result="MISS",source="origin",route="main"';
    assert.equal(summed.get(`svc_request_duration_seconds_bucket{le="0.0005",${labels}}`), 20);
    assert.equal(summed.get(`svc_request_duration_seconds_bucket{le="0.00025",${labels}}`), 0);
    assert.equal(summed.get(`svc_request_duration_seconds_count{${labels}}`), 20);
    assert.equal(summed.get('svc_response_bytes_total{method="GET",cache_result="HIT",source="hot",route="main"}'), 20);
    // Every name one node exposes is there, with its type line, and nothing else.
    const single = (await new NodeMetrics().exposition()).body;
    const types = (text: string): string[] => text.split('\n').filter((line) => line.startsWith('# TYPE')).sort();
    assert.deepEqual(types(body), types(single));
    // The process's own figures are said once, not once per thread: every thread reads the same.
    const residentBytes = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;
    const reported = summed.get('process_resident_memory_bytes')!;
    assert.ok(reported > 0.5 * residentBytes && reported < 1.5 * residentBytes, `${reported} reported, ${residentBytes} resident`);
    // A scraper that asks for OpenMetrics gets the same sums in it.
    const open = await aggregatedExposition(supervisor.calls, primary.registry, true);
    assert.match(open.contentType, /^application\/openmetrics-text/);
    assert.match(open.body, /\n# EOF\n$/);
    assert.match(open.body, new RegExp(`\\n${series('HIT', 'hot').replace(/[{}()]/g, '\\$&')} 10\\n`));
  } finally {
    await supervisor.stop();
  }
});

test('log lines of every worker reach one output whole, even lines longer than a pipe writes at once', async () => {
  const output: string[] = [];
  const { supervisor } = await startWorkers(output);
  try {
    const lines = 200;
    const outcome = await supervisor.calls.call('invalidate', { type: 'purge', url: `log:${lines}:6000` }, { onFailure: 'report' });
    assert.deepEqual(outcome.answers, [lines, lines]);
    const logged = (): Record<string, unknown>[] => output.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'line');
    await eventually('every line of both workers logged', () => logged().length, (count) => count >= 2 * lines, { timeoutMs: 20_000, everyMs: 50 });
    for (const line of output) assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, 'one line per write');
    const perWorker = new Map<unknown, number[]>();
    for (const line of logged()) perWorker.set(line.worker_thread, [...(perWorker.get(line.worker_thread) ?? []), line.i as number]);
    assert.equal(perWorker.size, 2);
    for (const indices of perWorker.values()) assert.deepEqual(indices, Array.from({ length: lines }, (_, i) => i));
  } finally {
    await supervisor.stop();
  }
});
