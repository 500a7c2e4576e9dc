// crash-detection: one node of a converged cluster crashes; measures when each survivor suspects it
// and declares it dead, and compares with SWIM's expected first detection (e/(e-1) probe periods,
// Das et al. 2002 section 3.1) plus Lifeguard's suspicion timeout (min with enough confirmations,
// max without).

import { createRandom, maxSuspicionTimeoutMs, minSuspicionTimeoutMs } from '../../cluster/index.js';
import type { Scenario, ScenarioOptions, ScenarioResult } from '../scenario.js';
import { SimCluster } from '../sim-cluster.js';
import { percentile } from '../stats.js';
import { bootstrapCheck, bootstrapConverged, check, ms, shareSeries } from './measure.js';

/** SWIM's expected time to the first probe of a failed member, in protocol periods: e/(e-1). */
export const EXPECTED_FIRST_PROBE_PERIODS = Math.E / (Math.E - 1);
/** Time for a death to spread after it is declared: a few gossip rounds on a LAN. */
const DISSEMINATION_ALLOWANCE_MS = 3000;
const STEP_MS = 100;

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const n = options.nodes;
  const random = createRandom(options.seed);
  const scenarioRandom = random.fork('scenario');
  const cluster = new SimCluster({ nodes: n, random });
  const config = cluster.config;
  const victim = 1 + scenarioRandom.int(n - 1);
  const victimName = cluster.names[victim]!;
  const suspectAt: (number | null)[] = new Array<number | null>(n).fill(null);
  const deadAt: (number | null)[] = new Array<number | null>(n).fill(null);
  let crashAtMs = Number.POSITIVE_INFINITY;
  const wronglyDead = new Set<string>();
  cluster.onMember((index, member) => {
    member.on('suspect', (info) => {
      if (info.name === victimName && suspectAt[index] === null) suspectAt[index] = cluster.clock.now();
    });
    member.on('fail', (info) => {
      if (info.name !== victimName) wronglyDead.add(info.name);
      else if (deadAt[index] === null) deadAt[index] = cluster.clock.now();
    });
  });

  const convergedMs = await bootstrapConverged(cluster, scenarioRandom);
  const probeIntervalMs = config.probeIntervalMs;
  const minTimeoutMs = minSuspicionTimeoutMs(config.suspicionMult, n, probeIntervalMs);
  const maxTimeoutMs = config.lifeguard ? maxSuspicionTimeoutMs(config.suspicionMaxTimeoutMult, minTimeoutMs) : minTimeoutMs;
  const firstDetectionMs = EXPECTED_FIRST_PROBE_PERIODS * probeIntervalMs;
  const upperBoundMs = firstDetectionMs + config.probeTimeoutMs + maxTimeoutMs + DISSEMINATION_ALLOWANCE_MS;
  const survivors = [...Array(n).keys()].filter((i) => i !== victim);
  let detectedMs: number | null = null;
  if (convergedMs !== null) {
    // Only suspicions and deaths after the crash count; the bootstrap must not have produced any.
    suspectAt.fill(null);
    deadAt.fill(null);
    crashAtMs = cluster.clock.now();
    cluster.crash(victim);
    detectedMs = await cluster.waitFor(() => survivors.every((i) => deadAt[i] !== null), STEP_MS, 2 * upperBoundMs);
  }
  const since = (times: (number | null)[]) => survivors.map((i) => (times[i] == null ? null : times[i]! - crashAtMs));
  const detection = since(deadAt);
  const suspicion = since(suspectAt);
  const reached = detection.filter((time): time is number => time !== null);
  const firstSuspicions = suspicion.filter((time): time is number => time !== null);
  const p50 = percentile(reached, 50);
  const p99 = percentile(reached, 99);
  const endMs = cluster.clock.now();
  return {
    scenario: 'crash-detection',
    options,
    figures: [
      { name: 'first suspicion', value: firstSuspicions.length === 0 ? null : Math.min(...firstSuspicions), unit: 'ms' },
      { name: 'declared dead p50', value: p50, unit: 'ms' },
      { name: 'declared dead p99', value: p99, unit: 'ms' },
      { name: 'declared dead max', value: reached.length === 0 ? null : Math.max(...reached), unit: 'ms' },
      { name: 'expected first detection (e/(e-1) periods)', value: firstDetectionMs, unit: 'ms' },
      { name: 'suspicion timeout min', value: minTimeoutMs, unit: 'ms' },
      { name: 'suspicion timeout max', value: maxTimeoutMs, unit: 'ms' },
      { name: 'expected with min timeout', value: firstDetectionMs + minTimeoutMs, unit: 'ms' },
      { name: 'expected with max timeout', value: firstDetectionMs + maxTimeoutMs, unit: 'ms' },
    ],
    checks: [
      bootstrapCheck(convergedMs, n),
      check(
        'every survivor declares the crashed node dead',
        detectedMs !== null,
        `${reached.length} of ${survivors.length} within ${ms(2 * upperBoundMs)}`,
      ),
      check(
        'p99 within first detection + probe timeout + max suspicion timeout + dissemination',
        p99 !== null && p99 <= upperBoundMs,
        `p99 ${ms(p99)}, bound ${ms(upperBoundMs)}`,
      ),
      check('no healthy node declared dead', wronglyDead.size === 0, `${wronglyDead.size} healthy nodes declared dead`),
    ],
    chart: {
      title: `crash of one node among ${n}`,
      xLabel: 'time since the crash (s)',
      yLabel: 'share of survivors',
      yMax: 1,
      series: [
        shareSeries('suspect it', suspicion, survivors.length, endMs - crashAtMs),
        shareSeries('declared it dead', detection, survivors.length, endMs - crashAtMs),
      ],
    },
    simulatedMs: endMs,
    events: cluster.clock.stats().firedEvents,
  };
}

export const crashDetectionScenario: Scenario = {
  name: 'crash-detection',
  description: 'one node crashes; time until every other node has it dead (p50/p99 vs SWIM expectation)',
  defaultNodes: 100,
  run,
};
