// Issue 2 item 10: cache-HIT throughput and latency through svc, beside the same requests sent
// straight to the origin and to a bare Node `http` server answering the same bytes from memory (svc's
// HIT fields, read off a live answer; Node's ceiling here). Each server runs in its own process;
// autocannon loads them one at a time.
//
//   npm run build && node dist/bench/hit-throughput.js [--rounds 10] [--seconds 3] [--connections 50] [--bytes 1024]
//
// The three targets are loaded in turn, round after round (the order rotating), and each figure is
// the median over the rounds: on a shared machine the capacity drifts by tens of percent within a
// minute, and a ratio taken from runs minutes apart measures the drift, not svc. The headline ratio
// is the median of the per-round ratios, each from runs seconds apart, with a 90% bootstrap interval
// that says how far one run can be trusted (ten rounds by default, for an interval worth reading).
// It prints figures; it asserts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startProcess, waitFor, type Started } from './support/processes.js';
import { measureLoad } from './support/load.js';
import { printMedianTable, type MeasuredFigures as Figures } from './support/median-table.js';
import { writeBenchSvcConfig } from './support/svc-config.js';
import { median, medianInterval } from './support/median-interval.js';
import { hitFields } from './support/hit-fields.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    bytes: { type: 'string', default: '1024' },
    warm: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const bytes = Number(values.bytes);

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const ORIGIN_PORT = 18_181;
const BARE_PORT = 18_182;
const SVC_PORT = 18_180;
const SVC_ADMIN_PORT = 19_180;


interface Target {
  name: string;
  url: string;
  server: Started;
  runs: Figures[];
}

async function load(target: Target, warmUpSeconds: number): Promise<Figures> {
  const options = { connections, seconds, serverPid: target.server.child.pid, warmUpSeconds };
  return (await measureLoad(target.name, target.url, options)) as Figures;
}

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
const configPath = await writeBenchSvcConfig(join(dir, 'svc.yaml'), {
  port: SVC_PORT,
  adminPort: SVC_ADMIN_PORT,
  originPort: ORIGIN_PORT,
  extra: ['hot_max_bytes: 268435456', ...(values.warm ? [`warm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: 1073741824 }`] : [])],
});

const origin = startProcess(process.execPath, [FIXED_SERVER, String(ORIGIN_PORT), String(bytes)]);
// svc's access log goes to /dev/null through stdout 'ignore'; sampling keeps it cheap anyway.
const svc = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', configPath]);
let bare: Started | undefined;
try {
  await waitFor(`http://127.0.0.1:${ORIGIN_PORT}/`);
  await waitFor(`http://127.0.0.1:${SVC_ADMIN_PORT}/readyz`);
  await waitFor(`http://127.0.0.1:${SVC_PORT}/hit`); // fills the cache: every later request is a HIT
  // The ceiling answers the same bytes as svc's HIT: its fields, its length.
  const fields = await hitFields(`http://127.0.0.1:${SVC_PORT}/hit`);
  bare = startProcess(process.execPath, [FIXED_SERVER, String(BARE_PORT), String(bytes), JSON.stringify(fields)]);
  await waitFor(`http://127.0.0.1:${BARE_PORT}/`);

  const targets: Target[] = [
    { name: 'bare node http (ceiling)', url: `http://127.0.0.1:${BARE_PORT}/hit`, server: bare, runs: [] },
    { name: 'origin direct', url: `http://127.0.0.1:${ORIGIN_PORT}/hit`, server: origin, runs: [] },
    { name: 'svc HIT (hot tier)', url: `http://127.0.0.1:${SVC_PORT}/hit`, server: svc, runs: [] },
  ];
  const [ceiling, direct, svcHit] = targets as [Target, Target, Target];
  for (const target of targets) await load(target, 2); // JIT and keep-alive settled before any round
  const svcOverBare: number[] = [];
  const svcOverDirect: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < targets.length; turn++) {
      const target = targets[(round + turn) % targets.length]!;
      target.runs.push(await load(target, 0));
    }
    const last = (target: Target): number => target.runs.at(-1)!.requestsPerSecond;
    svcOverBare.push(last(svcHit) / last(ceiling));
    svcOverDirect.push(last(svcHit) / last(direct));
  }

  console.log(`\n${bytes}-byte body, ${connections} connections, ${rounds} rounds of ${seconds} s per target, Node ${process.version}`);
  console.log('medians over the rounds\n');
  printMedianTable(targets);
  const perRound = svcOverBare.map((ratio) => ratio.toFixed(2)).join(' ');
  const interval = medianInterval(svcOverBare);
  console.log(`\nsvc HIT / bare node:    ${median(svcOverBare).toFixed(3)}x  (target >= 0.8x; per round: ${perRound})`);
  console.log(`  90% bootstrap interval of that median: ${interval.low.toFixed(3)}x to ${interval.high.toFixed(3)}x`);
  console.log(`svc HIT / origin direct: ${median(svcOverDirect).toFixed(3)}x`);
  const cpu = (target: Target): number => median(target.runs.map((r) => r.cpuUsPerRequest));
  console.log(`CPU per request, bare / svc: ${(cpu(ceiling) / cpu(svcHit)).toFixed(3)}x (the throughput ratio a CPU-bound server reaches)`);
} finally {
  await Promise.all([svc.stop(), origin.stop(), bare?.stop()]);
  await rm(dir, { recursive: true, force: true });
}
