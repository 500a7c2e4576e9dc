// Issue 14 item 1: an error nothing caught is logged and counted, and the node keeps serving; past
// the budget (here 3 in a minute) it stops cleanly and exits with status 70 for its supervisor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fetchRaw } from '../support/http.js';
import { LAST_RESORT_EXIT_CODE } from '../../src/node/last-resort.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/last-resort-node.js', import.meta.url));

test('uncaught errors are logged and counted while the node serves on; too many stop it with status 70', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, [FIXTURE], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    lines.push(line);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(line)) waiter.resolve(line);
      else waiters.push(waiter);
    }
  });
  const logged = (match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    const seen = lines.find(match);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ match, resolve }));
  };
  const exited = once(child, 'exit');
  try {
    const serving = await logged((line) => line.msg === 'svc is serving');
    const adminUrl = String(serving.admin);

    child.stdin!.write('throw\nreject\n');
    await logged((line) => line.kind === 'unhandled_rejection');
    await logged((line) => line.kind === 'uncaught_exception');
    assert.equal((await fetchRaw(`${adminUrl}/healthz`)).status, 200, 'still serving');
    const metrics = (await fetchRaw(`${adminUrl}/metrics`)).body;
    assert.match(metrics, /svc_uncaught_errors_total\{kind="uncaught_exception"\} 1/);
    assert.match(metrics, /svc_uncaught_errors_total\{kind="unhandled_rejection"\} 1/);
    const first = lines.find((line) => line.kind === 'uncaught_exception')!;
    assert.equal(first.msg, 'uncaught error: logged, counted, still serving');
    assert.match(String((first.err as { message?: string }).message), /thrown on purpose/);

    child.stdin!.write('throw\nthrow\n');
    const [code] = await exited;
    assert.equal(code, LAST_RESORT_EXIT_CODE);
    assert.ok(lines.some((line) => line.msg === 'too many uncaught errors: stopping'));
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
