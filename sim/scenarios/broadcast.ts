// broadcast: user broadcasts from random members of a converged cluster; measures how long each
// takes to reach every other member. Issue 5 asks for p99 under 1 s at 100 nodes, 2 s at 1,000.

import { createRandom } from '../../cluster/index.js';
import type { Scenario, ScenarioOptions, ScenarioResult, Series } from '../scenario.js';
import { SimCluster } from '../sim-cluster.js';
import { percentile } from '../stats.js';
import { bootstrapCheck, bootstrapConverged, check, ms, shareSeries } from './measure.js';

const BROADCASTS = 10;
const BROADCAST_INTERVAL_MS = 2000;
/** How long after the last broadcast the scenario waits for stragglers. */
const DRAIN_BUDGET_MS = 30_000;
const CHARTED_BROADCASTS = 5;

/** The p99 bound issue 5 states: 1 s up to 100 nodes, 2 s above. */
export function broadcastP99BoundMs(nodes: number): number {
  return nodes <= 100 ? 1000 : 2000;
}

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const n = options.nodes;
  const random = createRandom(options.seed);
  const scenarioRandom = random.fork('scenario');
  const cluster = new SimCluster({ nodes: n, random });
  // receivedAt[b][i]: when node i received broadcast b (null: not yet; the origin counts at send time).
  const receivedAt: (number | null)[][] = Array.from({ length: BROADCASTS }, () => new Array<number | null>(n).fill(null));
  const sentAt: number[] = [];
  const origins: number[] = [];
  cluster.onMember((index, member) => {
    member.onBroadcast((payload) => {
      const id = payload[0] ?? 0;
      const row = receivedAt[id];
      if (row !== undefined && row[index] === null) row[index] = cluster.clock.now();
    });
  });
  const convergedMs = await bootstrapConverged(cluster, scenarioRandom);
  let complete: number | null = null;
  if (convergedMs !== null) {
    for (let id = 0; id < BROADCASTS; id++) {
      const origin = scenarioRandom.int(n);
      origins.push(origin);
      sentAt.push(cluster.clock.now());
      receivedAt[id]![origin] = cluster.clock.now();
      const payload = new Uint8Array(64);
      payload[0] = id;
      cluster.member(origin).broadcast(payload);
      await cluster.clock.runFor(BROADCAST_INTERVAL_MS);
    }
    complete = await cluster.waitFor(() => receivedAt.every((row) => !row.includes(null)), 100, DRAIN_BUDGET_MS);
  }
  const latencies: number[] = [];
  let missing = 0;
  receivedAt.forEach((row, id) => {
    row.forEach((time, index) => {
      if (index === origins[id] || sentAt[id] === undefined) return;
      if (time === null) missing++;
      else latencies.push(time - sentAt[id]);
    });
  });
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  const boundMs = broadcastP99BoundMs(n);
  const series: Series[] = receivedAt.slice(0, CHARTED_BROADCASTS).flatMap((row, id) => {
    const start = sentAt[id];
    if (start === undefined) return [];
    const times = row.filter((_, index) => index !== origins[id]).map((time) => (time === null ? null : time - start));
    return [shareSeries(`broadcast ${id + 1}`, times, n - 1, 0)];
  });
  return {
    scenario: 'broadcast',
    options,
    figures: [
      { name: 'broadcasts', value: sentAt.length, unit: '' },
      { name: 'latency p50', value: p50, unit: 'ms' },
      { name: 'latency p99', value: p99, unit: 'ms' },
      { name: 'latency max', value: latencies.length === 0 ? null : Math.max(...latencies), unit: 'ms' },
      { name: 'deliveries missing', value: missing, unit: '' },
    ],
    checks: [
      bootstrapCheck(convergedMs, n),
      check('every broadcast reaches every node', complete !== null && missing === 0, `${missing} deliveries missing`),
      check(`p99 under ${boundMs / 1000} s`, p99 !== null && p99 < boundMs, `p99 ${ms(p99)}`),
    ],
    chart: {
      title: `user broadcasts among ${n} nodes`,
      xLabel: 'time since the broadcast (s)',
      yLabel: 'share of nodes reached',
      yMax: 1,
      series,
    },
    simulatedMs: cluster.clock.now(),
    events: cluster.clock.stats().firedEvents,
  };
}

export const broadcastScenario: Scenario = {
  name: 'broadcast',
  description: 'user broadcasts reach every node; p50/p99 latency (p99 < 1 s at 100, < 2 s at 1,000)',
  defaultNodes: 100,
  run,
};
