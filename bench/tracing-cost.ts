// Issue 19 item 6: what tracing costs a 1 KiB cache HIT. The same svc build runs three times, each in
// its own process fronting one origin: tracing off, on at sampling_rate 0.01 and on at 1, exporting to
// a stand-in collector that accepts everything. With --baseline-cli (another build's
// dist/src/cli/main.js, e.g. main's), that build runs too, so "off" can be compared with it.
//
//   npm run build && node dist/bench/tracing-cost.js [--rounds 10] [--seconds 3] [--connections 50] [--rates off,0.01,1] [--baseline-cli path]
//
// The targets are loaded one at a time, round after round, the order rotating; each ratio is taken
// within a round (runs seconds apart) and the median of the per-round ratios is printed with its
// 90% bootstrap interval, for throughput and for the server's CPU per request. It asserts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startProcess, waitFor, type Started } from './support/processes.js';
import { measureLoad } from './support/load.js';
import { printMedianTable, type MeasuredFigures as Figures } from './support/median-table.js';
import { writeBenchSvcConfig } from './support/svc-config.js';
import { median, medianInterval } from './support/median-interval.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    /**
     * The sampling rates to run with tracing on, beside tracing off; `off` adds a second process with
     * tracing off, whose ratio to the first shows how far two processes of one build differ.
     */
    rates: { type: 'string', default: 'off,0.01,1' },
    'baseline-cli': { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rates = values.rates.split(',');

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const OTLP_SINK = fileURLToPath(new URL('./servers/otlp-sink-server.js', import.meta.url));
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));


interface Target {
  name: string;
  url: string;
  server: Started;
  runs: Figures[];
}

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-tracing-'));
const originPort = await freePort();
const sinkPort = await freePort();
const started: Started[] = [];
const startSvc = async (name: string, cli: string, tracing: string | undefined): Promise<Target> => {
  const [port, adminPort] = [await freePort(), await freePort()];
  const configPath = await writeBenchSvcConfig(join(dir, `${name.replace(/\W+/g, '-')}.yaml`), {
    port,
    adminPort,
    originPort,
    extra: tracing === undefined ? [] : [tracing],
  });
  const server = startProcess(process.execPath, [cli, 'serve', '--config', configPath]);
  started.push(server);
  await waitFor(`http://127.0.0.1:${adminPort}/readyz`);
  await waitFor(`http://127.0.0.1:${port}/hit`); // fills the cache: every later request is a HIT
  return { name, url: `http://127.0.0.1:${port}/hit`, server, runs: [] };
};

try {
  started.push(startProcess(process.execPath, [FIXED_SERVER, String(originPort), '1024']));
  started.push(startProcess(process.execPath, [OTLP_SINK, String(sinkPort)]));
  await waitFor(`http://127.0.0.1:${originPort}/`);
  const tracingAt = (rate: number): string => `tracing: { endpoint: "127.0.0.1:${sinkPort}", sampling_rate: ${rate} }`;
  const baseline = values['baseline-cli'] === undefined ? undefined : await startSvc('baseline build, tracing off', values['baseline-cli'], undefined);
  const off = await startSvc('tracing off', SVC_CLI, undefined);
  const traced: Target[] = [];
  for (const rate of rates) {
    traced.push(rate === 'off' ? await startSvc('tracing off, second process', SVC_CLI, undefined) : await startSvc(`tracing on, rate ${rate}`, SVC_CLI, tracingAt(Number(rate))));
  }
  const targets = [...(baseline ? [baseline] : []), off, ...traced];

  const load = async (target: Target, warmUpSeconds: number): Promise<Figures> =>
    (await measureLoad(target.name, target.url, { connections, seconds, serverPid: target.server.child.pid, warmUpSeconds })) as Figures;
  for (const target of targets) await load(target, 2); // JIT and keep-alive settled before any round
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < targets.length; turn++) {
      const target = targets[(round + turn) % targets.length]!;
      target.runs.push(await load(target, 0));
    }
  }

  console.log(`\n1024-byte HIT, ${connections} connections, ${rounds} rounds of ${seconds} s per target, Node ${process.version}`);
  console.log('medians over the rounds\n');
  printMedianTable(targets);
  /** Per-round ratios of a figure, `of` over `to`, with their median and interval. */
  const ratio = (label: string, of: Target, to: Target, figure: (run: Figures) => number): void => {
    const perRound = of.runs.map((run, i) => figure(run) / figure(to.runs[i]!));
    const interval = medianInterval(perRound);
    console.log(
      `${label.padEnd(52)} ${median(perRound).toFixed(3)}x  (90% interval ${interval.low.toFixed(3)}x to ${interval.high.toFixed(3)}x; per round ${perRound.map((r) => r.toFixed(2)).join(' ')})`,
    );
  };
  const throughput = (run: Figures): number => run.requestsPerSecond;
  const cpu = (run: Figures): number => run.cpuUsPerRequest;
  console.log('\nthroughput ratios (1 = no cost)');
  if (baseline) ratio('tracing off / baseline build', off, baseline, throughput);
  for (const [i, target] of traced.entries()) ratio(`${rates[i] === 'off' ? 'second process' : `rate ${rates[i]}`} / tracing off`, target, off, throughput);
  console.log('\nserver CPU per request ratios (1 = no cost)');
  if (baseline) ratio('tracing off / baseline build', off, baseline, cpu);
  for (const [i, target] of traced.entries()) ratio(`${rates[i] === 'off' ? 'second process' : `rate ${rates[i]}`} / tracing off`, target, off, cpu);
} finally {
  await Promise.all(started.map((server) => server.stop()));
  await rm(dir, { recursive: true, force: true });
}
