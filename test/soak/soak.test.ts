// Issue 29 item 3, the CI version of the soak (bench/soak.ts runs it for 30 minutes and prints the
// figures): the same code for 2 minutes, `svc serve` on the defaults as a child process, at a load a
// loaded 2-core machine sustains (200 requests/s asked, whatever it gets), with one data-plane thread
// killed, reloads, and every kind of invalidation, and both tiers small enough to be at their bounds
// within the first window (hot 16 MiB, warm 8 MiB), so that eviction runs all along in both. Its
// one Node flag, --max-semi-space-size=16, holds each thread's young generation at 32 MiB: V8 grows
// it with the rate of allocation, doubling up to 128 MiB a thread over minutes, and that growth,
// bounded and no leak, would read as such here (the 30-minute run keeps V8's default and shows it).
//
// It checks what must hold however slow the machine: no failed request other than those a killed
// thread's connections explain (bench/support/soak-report.ts says how they are attributed), the
// thread started again, every reload and invalidation applied, HITs in every window, the warm tier
// at its bound, the node stopped cleanly, and its memory bounded after warm-up. No timing is checked.
//
// Memory is held to two bounds after warm-up, not to the 5% the 30-minute run is held to: here the
// end is 80 to 100 s after warm-up.
// - What is live, 25%: the V8 heaps (used, and committed) and the memory V8 knows of outside them
//   (Buffers). A leak per request shows here first: over the 15,000 requests after warm-up, 1.4 KB
//   of JS objects each is a fourth of the 80 MiB of heaps, 1.6 KB of Buffers a fourth of the 90 MiB
//   external.
// - What is resident (RSS and its anonymous part), 50%. Freed Buffers go back to malloc, which keeps
//   the pages: the resident set follows the highest point transient allocations have reached, and
//   under a noisy neighbour that point keeps rising for minutes while nothing is live. Measured on
//   this machine, heaps flat: +8.6% alone, +13.8% beside four busy loops (+15.0% with
//   MALLOC_ARENA_MAX=2: not malloc's per-thread arenas), +29.4% beside a second `npm test` (365.6 →
//   473.0 MiB, its increments shrinking 52, 24, 20, 11 MiB per 20 s). 50% still
//   catches a native leak of 13 KB per request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSoak, soakDefaults } from '../../bench/support/soak-run.js';
import { formatSoakFigures, soakFigures } from '../../bench/support/soak-report.js';

const LIVE_GROWTH_BOUND_PCT = 25;
const RESIDENT_GROWTH_BOUND_PCT = 50;

test('two minutes of mixed load with a thread killed: no failure but on its connections, memory bounded', { timeout: 8 * 60_000 }, async (t) => {
  const record = await runSoak({
    ...soakDefaults(2 * 60_000),
    requestsPerSecond: 200,
    connections: 8,
    hotMaxBytes: 16 * 1024 * 1024,
    warmMaxBytes: 8 * 1024 * 1024,
    nodeFlags: ['--max-semi-space-size=16'],
  });
  const figures = soakFigures(record);
  const report = formatSoakFigures(figures);
  for (const line of report.split('\n')) t.diagnostic(line);

  assert.equal(record.nodeExit.during, false, `the node exited during the soak:\n${record.stderrTail.join('\n')}`);
  assert.deepEqual({ code: record.nodeExit.code, signal: record.nodeExit.signal }, { code: 0, signal: null }, report);
  assert.ok(figures.workers >= 2, 'the defaults run a thread per core, and this machine has more than one');

  assert.equal(figures.kills.length, 1, report);
  const [kill] = figures.kills;
  assert.notEqual(kill!.threadId, undefined, 'a data-plane thread was killed');
  assert.notEqual(kill!.exitLoggedAfterMs, undefined, 'the supervisor logged its exit and started it again');
  assert.equal(figures.failed.other, 0, report);

  assert.ok(figures.reloads.total >= 2, report);
  assert.equal(figures.reloads.ok, figures.reloads.total, report);
  for (const operation of ['purge', 'purge batch', 'refresh', 'ban surrogate_key', 'ban path_regex', 'ban host_regex']) {
    assert.ok((figures.invalidations[operation] ?? 0) >= 1, `${operation}: ${report}`);
  }
  assert.deepEqual(figures.adminFailures, [], report);

  for (const window of figures.windows) assert.ok(window.hits > 0, `HITs from ${window.fromS} s: ${report}`);
  assert.ok(figures.byResult.MISS! > 0 && figures.byResult.REVALIDATED! > 0, report);

  assert.ok(figures.memory.tiersFullAtWarmUp, `both tiers at their bounds after warm-up: ${report}`);
  assert.ok(figures.memory.warmBytesAtEnd >= 0.9 * figures.memory.warmMaxBytes, report);
  assert.ok(figures.memory.warmUpEndS < figures.durationS, report);
  const { rss, anonymous, heapUsed, heapTotal, external } = figures.memory;
  const bounds = [
    [{ heapUsed, heapTotal, external }, LIVE_GROWTH_BOUND_PCT],
    [{ rss, anonymous }, RESIDENT_GROWTH_BOUND_PCT],
  ] as const;
  for (const [figuresOf, boundPct] of bounds) {
    for (const [name, growth] of Object.entries(figuresOf)) {
      assert.ok(growth.atWarmUpBytes > 0 && growth.atEndBytes > 0, `${name} sampled: ${report}`);
      assert.ok(growth.growthPct < boundPct, `${name} grew ${growth.growthPct.toFixed(1)}% after warm-up, more than ${boundPct}%: ${report}`);
    }
  }
});
