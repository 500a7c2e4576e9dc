// Issue 14 item 6: what active bans cost a cache HIT through svc, at 0, 1,000, 10,000 and 100,000
// bans (10,000 must cost a hit less than 2x no bans).
//
//   npm run build && node dist/bench/ban-hit-latency.js [--rounds 3] [--seconds 3] [--connections 10] [--urls 1000]
//
// Two svc processes in front of one origin: a reference with no ban, and one that gets the bans
// (bench/support/ban-mix.ts: surrogate key, path, host and host+path regexes; none matches the
// URLs, so nothing is hidden and every check runs to its end). The URLs are cached before any ban,
// so every entry is older than every ban: no ban can be skipped for being older than the entry.
// At each level autocannon loads the two in turn, round after round, over the same URLs (Host
// headers spread over 100 hosts, half of which the host+path bans name), and the figures are
// medians over the rounds; the ratios are per round, each from runs seconds apart. CPU per request
// is the server's own cost, whatever else the machine does. It prints figures; it asserts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { request } from 'undici';
import { benchBan, lookupHost, lookupPath } from './support/ban-mix.js';
import { median } from './support/median-interval.js';
import { cpuTimeMs, freePort, startProcess, waitFor, type Started } from './support/processes.js';
import { BENCH_ADMIN_TOKEN, writeBenchSvcConfig } from './support/svc-config.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    urls: { type: 'string', default: '1000' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const urlCount = Number(values.urls);
const LEVELS = [0, 1_000, 10_000, 100_000];
/** Bans sent at once while a level is installed. */
const BAN_CONCURRENCY = 16;

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

interface Svc {
  name: string;
  dataUrl: string;
  adminUrl: string;
  server: Started;
}

interface Run {
  requestsPerSecond: number;
  /** autocannon's latency percentiles are whole milliseconds: a HIT takes less, so the mean is given. */
  meanMs: number;
  p99Ms: number;
  cpuUsPerRequest: number;
}

const requests = Array.from({ length: urlCount }, (_, i) => ({ method: 'GET' as const, path: lookupPath(i), headers: { host: lookupHost(i) } }));

async function startSvc(name: string, dir: string, originPort: number): Promise<Svc> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const config = await writeBenchSvcConfig(join(dir, `${name}.yaml`), {
    port,
    adminPort,
    originPort,
    extra: ['hot_max_bytes: 268435456', 'max_active_bans: 200000'],
  });
  const server = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', config]);
  const svc = { name, dataUrl: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}`, server };
  await waitFor(`${svc.adminUrl}/readyz`);
  return svc;
}

/** Stores every URL (a MISS each), before any ban: every entry is older than every ban. */
async function fill(svc: Svc): Promise<void> {
  for (const { path, headers } of requests) {
    const response = await request(`${svc.dataUrl}${path}`, { headers });
    await response.body.dump();
  }
}

async function addBans(svc: Svc, from: number, to: number): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) {
      const i = next;
      next += 1;
      const response = await request(`${svc.adminUrl}/v1/ban`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(benchBan(i)),
      });
      const body = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`ban ${i}: ${response.statusCode} ${body}`);
    }
  };
  await Promise.all(Array.from({ length: BAN_CONCURRENCY }, worker));
}

async function load(svc: Svc): Promise<Run> {
  const pid = svc.server.child.pid as number;
  const cpuBefore = cpuTimeMs(pid);
  const result = await autocannon({ url: svc.dataUrl, connections, duration: seconds, requests });
  if (result.errors + result.non2xx > 0) throw new Error(`${svc.name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  return {
    requestsPerSecond: result.requests.average,
    meanMs: result.latency.average,
    p99Ms: result.latency.p99,
    cpuUsPerRequest: ((cpuTimeMs(pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total),
  };
}

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-bans-'));
const originPort = await freePort();
const fields = {
  'content-type': 'application/octet-stream',
  'content-length': '1024',
  'cache-control': 'public, max-age=86400',
  'surrogate-key': 'catalogue product',
};
const origin = startProcess(process.execPath, [FIXED_SERVER, String(originPort), '1024', JSON.stringify(fields)]);
const started: Svc[] = [];
try {
  await waitFor(`http://127.0.0.1:${originPort}/`);
  const reference = await startSvc('no bans', dir, originPort);
  started.push(reference);
  const banned = await startSvc('with bans', dir, originPort);
  started.push(banned);
  await fill(reference);
  await fill(banned);
  // JIT and keep-alive settled before anything is measured.
  await autocannon({ url: reference.dataUrl, connections, duration: 2, requests });
  await autocannon({ url: banned.dataUrl, connections, duration: 2, requests });

  console.log(`HIT through svc, ${urlCount} URLs cached before every ban, ${connections} connections, ${rounds} rounds of ${seconds} s, Node ${process.version}`);
  console.log('bans      server        req/s   mean ms   p99 ms   CPU µs/req   |  banned / reference: CPU/req  mean latency');
  let installed = 0;
  for (const level of LEVELS) {
    const installStarted = performance.now();
    await addBans(banned, installed, level);
    const installSeconds = (performance.now() - installStarted) / 1000;
    installed = level;
    const runs = new Map<Svc, Run[]>([
      [reference, []],
      [banned, []],
    ]);
    const cpuRatios: number[] = [];
    const meanRatios: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? [reference, banned] : [banned, reference];
      for (const svc of order) runs.get(svc)?.push(await load(svc));
      const last = (svc: Svc): Run => runs.get(svc)?.at(-1) as Run;
      cpuRatios.push(last(banned).cpuUsPerRequest / last(reference).cpuUsPerRequest);
      meanRatios.push(last(banned).meanMs / last(reference).meanMs);
    }
    for (const svc of [reference, banned]) {
      const of = (figure: (run: Run) => number): number => median((runs.get(svc) ?? []).map(figure));
      const ratios = svc === banned ? `  |  ${median(cpuRatios).toFixed(2)}x   ${median(meanRatios).toFixed(2)}x` : '';
      console.log(
        `${String(level).padEnd(9)} ${svc.name.padEnd(10)} ${of((r) => r.requestsPerSecond).toFixed(0).padStart(8)}   ${of((r) => r.meanMs).toFixed(3).padStart(7)}   ${of((r) => r.p99Ms).toFixed(2).padStart(6)}   ${of((r) => r.cpuUsPerRequest).toFixed(1).padStart(10)}${ratios}`,
      );
    }
    if (level > 0) console.log(`          (${level} bans installed, ${installSeconds.toFixed(1)} s for the last ${level - (LEVELS[LEVELS.indexOf(level) - 1] ?? 0)})`);
  }
} finally {
  await Promise.all([...started.map((svc) => svc.server.stop()), origin.stop()]);
  await rm(dir, { recursive: true, force: true });
}
