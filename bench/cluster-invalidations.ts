// Issue 16 figures, on clusters of 5 real `svc serve` processes on 127.0.0.1:
//   (1) eventual mode: 1,000 purges issued within one second, from all five nodes in turn; for each
//       purge, the time until every other node had applied it (p50 / p99 / max), beside the same for
//       10 lone purges made one at a time in the same run;
//   (2) strong mode with warm tiers: a node down while N invalidations (default 10,000) are made, then
//       restarted: the time from its restart to ready (caught up), beside a restart that missed none.
//
//   npm run build && flock /work/wt/bench.lock node dist/bench/cluster-invalidations.js [--burst 1000] [--away 10000]
//
// When a node applied a purge is read from the purge count of its /v1/stats, polled every 20 ms once
// every purge was answered by its origin: a node applies the purges it receives in about the order they were made (batches keep it),
// so its k-th applied purge is taken for the k-th purge made elsewhere. It prints figures; it asserts
// nothing; it stops every process it started, also on error or when the watchdog fires.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startProcess, waitFor, type Started } from './support/processes.js';
import { BENCH_ADMIN_TOKEN, freePort, startBenchCluster, type BenchCluster, type BenchNode } from './support/svc-cluster-processes.js';

const { values } = parseArgs({ options: { burst: { type: 'string', default: '1000' }, away: { type: 'string', default: '10000' } } });
const burstCount = Number(values.burst);
const awayCount = Number(values.away);
for (const [name, value] of [['burst', burstCount], ['away', awayCount]] as const) {
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name}: expected a whole number (0 skips that part)`);
}

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const NAMES = ['n1', 'n2', 'n3', 'n4', 'n5'];
const SITE = 'bench.example';
const POLL_MS = 20;
const REACH_LIMIT_MS = 30_000;
const WATCHDOG_MS = 300_000;
const log = (line = ''): void => console.log(line);
const now = (): number => performance.now();

function summary(samplesMs: number[]): string {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  const ms = (value: number): string => `${value.toFixed(0)} ms`;
  return `n=${sorted.length}  p50 ${ms(at(0.5))}  p99 ${ms(at(0.99))}  max ${ms(sorted.at(-1) ?? Number.NaN)}`;
}

function adminPool(node: BenchNode): Pool {
  return new Pool(node.adminUrl, { connections: 16 });
}

async function post(pool: Pool, path: string, body: unknown): Promise<void> {
  const response = await pool.request({
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}: ${text}`);
}

/** Purges a node has applied, its own included (`/v1/stats`: cheaper to poll than the metrics page). */
async function appliedPurges(pool: Pool): Promise<number> {
  const response = await pool.request({ method: 'GET', path: '/v1/stats', headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } });
  return (JSON.parse(await response.body.text()) as { invalidations: { purge: number } }).invalidations.purge;
}

/**
 * Makes `count` purges from the nodes in turn, spread over `spreadMs`, and follows each node's applied
 * count until every node has every purge made elsewhere. Returns, per purge, the time until the last
 * other node applied it.
 */
async function reach(cluster: BenchCluster, count: number, spreadMs: number, prefix: string): Promise<number[]> {
  const pools = cluster.nodes.map(adminPool);
  try {
    const base = await Promise.all(pools.map(appliedPurges));
    const issued: { origin: number; atMs: number }[] = [];
    const sending: Promise<void>[] = [];
    const startMs = now();
    for (let i = 0; i < count; i++) {
      const dueMs = startMs + (i * spreadMs) / count;
      if (dueMs > now()) await new Promise((resolve) => setTimeout(resolve, dueMs - now()));
      const origin = i % pools.length;
      issued.push({ origin, atMs: now() });
      sending.push(post(pools[origin]!, '/v1/purge', { url: `http://${SITE}/${prefix}/${i}` }));
    }
    // Per node: when its applied count reached 1, 2, ... purges made elsewhere.
    const reachedAt: number[][] = pools.map(() => []);
    const own = pools.map((_, n) => issued.filter((purge) => purge.origin === n).length);
    const expected = pools.map((_, n) => issued.length - own[n]!);
    await Promise.all(sending);
    if (process.env.BENCH_DEBUG) log(`    (all ${count} answered by their origins ${(now() - startMs).toFixed(0)} ms after the first was sent)`);
    const deadline = now() + REACH_LIMIT_MS;
    while (reachedAt.some((times, n) => times.length < expected[n]!) && now() < deadline) {
      const counts = await Promise.all(pools.map(appliedPurges));
      const at = now();
      counts.forEach((total, n) => {
        while (reachedAt[n]!.length < Math.min(total - base[n]! - own[n]!, expected[n]!)) reachedAt[n]!.push(at);
      });
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return issued.map((purge, i) => {
      let last = 0;
      for (let n = 0; n < pools.length; n++) {
        if (n === purge.origin) continue;
        const rank = issued.slice(0, i + 1).filter((p) => p.origin !== n).length - 1;
        last = Math.max(last, (reachedAt[n]![rank] ?? Number.POSITIVE_INFINITY) - purge.atMs);
      }
      return last;
    });
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

async function peerState(node: BenchNode, name: string): Promise<string | undefined> {
  const pool = adminPool(node);
  try {
    const response = await pool.request({ method: 'GET', path: '/v1/cluster/peers' });
    const peers = JSON.parse(await response.body.text()) as { name: string; state: string }[];
    return peers.find((peer) => peer.name === name)?.state;
  } finally {
    await pool.close();
  }
}

async function until(check: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
  const deadline = now() + limitMs;
  while (!(await check())) {
    if (now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Kills `name`, waits until the others see it dead, runs `whileDown`, restarts it: ms until ready. */
async function downAndBack(cluster: BenchCluster, name: string, whileDown: () => Promise<void>): Promise<{ readyMs: number; reason: string }> {
  const [first] = cluster.nodes;
  await cluster.kill(name);
  await until(async () => (await peerState(first!, name)) === 'dead', `${name} declared dead`);
  await whileDown();
  const startedMs = now();
  await cluster.relaunch(name);
  const node = cluster.nodes.find((candidate) => candidate.name === name)!;
  const pool = adminPool(node);
  try {
    let reason = '';
    await until(async () => {
      const response = await pool.request({ method: 'GET', path: '/readyz?detail=1' });
      const detail = JSON.parse(await response.body.text()) as { status: string; conditions: { name: string; reason: string }[] };
      reason = detail.conditions.find((c) => c.name === 'cluster_caught_up')?.reason ?? '';
      return detail.status === 'ready';
    }, `${name} ready`);
    return { readyMs: now() - startedMs, reason };
  } finally {
    await pool.close();
  }
}

async function main(): Promise<void> {
  const port = await freePort();
  const origin: Started = startProcess(process.execPath, [FIXED_SERVER, String(port), '64']);
  const clusters: BenchCluster[] = [];
  const watchdog = setTimeout(() => {
    console.error(`watchdog: still running after ${WATCHDOG_MS / 1000} s`);
    void Promise.all([...clusters.map((c) => c.stop()), origin.stop()]).then(() => process.exit(1));
  }, WATCHDOG_MS);
  try {
    await waitFor(`http://127.0.0.1:${port}/`);
    log(`cluster-invalidations: 5 svc processes on 127.0.0.1; load average ${loadavg().map((v) => v.toFixed(2)).join(' / ')}`);

    const eventual = await startBenchCluster({ names: NAMES, mode: 'eventual', originUrl: `http://127.0.0.1:${port}`, hopLimit: 1 });
    clusters.push(eventual);
    const lone: number[] = [];
    if (burstCount === 0) throw new Error('--burst 0: nothing to measure');
    for (let i = 0; i < 10; i++) lone.push(...(await reach(eventual, 1, 0, `lone-${i}`)));
    const burst = await reach(eventual, burstCount, 1_000, 'burst');
    log();
    log('(1) eventual mode: time until every other node applied a purge');
    log(`    10 lone purges, one at a time          ${summary(lone)}`);
    log(`    ${burstCount} purges within 1 s, 5 origins   ${summary(burst)}`);
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    log(`    burst p50 / lone p50: ${(median(burst) / median(lone)).toFixed(2)}; every purge everywhere within ${Math.max(...burst).toFixed(0)} ms (spec: 5 s)`);
    await eventual.stop();
    clusters.length = 0;
    if (awayCount === 0) return;

    const strong = await startBenchCluster({ names: NAMES, mode: 'strong', originUrl: `http://127.0.0.1:${port}`, hopLimit: 2, warm: true });
    clusters.push(strong);
    const baseline = await downAndBack(strong, 'n5', async () => undefined);
    let madeMs = 0;
    const away = await downAndBack(strong, 'n5', async () => {
      const pools = strong.nodes.slice(0, 4).map(adminPool);
      const startedMs = now();
      try {
        for (let i = 0; i < awayCount; i += 64) {
          await Promise.all(
            Array.from({ length: Math.min(64, awayCount - i) }, (_, j) => post(pools[(i + j) % 4]!, '/v1/purge', { url: `http://${SITE}/away/${i + j}` })),
          );
        }
      } finally {
        await Promise.all(pools.map((pool) => pool.close()));
      }
      madeMs = now() - startedMs;
    });
    log();
    log(`(2) strong mode, warm tiers: a node restarted (SIGKILL, then svc serve again) until ready`);
    log(`    having missed nothing                   ${baseline.readyMs.toFixed(0)} ms  (${baseline.reason})`);
    log(`    having missed ${awayCount} purges           ${away.readyMs.toFixed(0)} ms  (${away.reason}); they took ${(madeMs / 1000).toFixed(1)} s to make`);
    log(`    catch-up cost: ${(away.readyMs - baseline.readyMs).toFixed(0)} ms (ratio ${(away.readyMs / baseline.readyMs).toFixed(2)})`);
  } finally {
    clearTimeout(watchdog);
    await Promise.all([...clusters.map((c) => c.stop()), origin.stop()]);
  }
}

await main();
