// partition-heal: a converged cluster splits into two halves (a symmetric partition) for a while, long
// enough for each side to declare the other dead, then heals; the cluster must converge again (one
// checksum, everyone alive) within a stated bound.

import { createRandom } from '../../cluster/index.js';
import type { Scenario, ScenarioOptions, ScenarioResult } from '../scenario.js';
import { SimCluster } from '../sim-cluster.js';
import { bootstrapCheck, bootstrapConverged, check, ms } from './measure.js';

/** Default length of the partition: past Lifeguard's minimum suspicion timeout at 1,000 nodes (12 s). */
const DEFAULT_PARTITION_S = 30;
/**
 * Stated bound on convergence after the heal: one reconnect interval (10 s, when some member of each
 * side first tries a push-pull with a member it holds dead; at 50 failed members per side that happens
 * within the first interval with near certainty) plus 20 s for the refutations both sides then make to
 * spread by gossip. See docs/cluster.md, "Partitions and reconnect".
 */
export const HEAL_BUDGET_MS = 30_000;
const STEP_MS = 100;

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const n = options.nodes;
  const partitionMs = (options.durationS ?? DEFAULT_PARTITION_S) * 1000;
  const random = createRandom(options.seed);
  const cluster = new SimCluster({ nodes: n, random });
  const half = Math.floor(n / 2);
  const sideA = cluster.addresses.slice(0, half);
  const sideB = cluster.addresses.slice(half);
  let crossDeaths = 0;
  cluster.onMember((index, member) => {
    member.on('fail', (info) => {
      if (index < half !== cluster.indexOf(info.name) < half) crossDeaths++;
    });
  });
  const convergedMs = await bootstrapConverged(cluster, random.fork('scenario'));
  const timeline: [number, number][] = [];
  const sample = (startMs: number) => {
    let full = 0;
    for (let i = 0; i < n; i++) if (cluster.liveCount(i) === n) full++;
    timeline.push([(cluster.clock.now() - startMs) / 1000, full / n]);
  };
  let healedMs: number | null = null;
  let splitSeen = false;
  const startMs = cluster.clock.now();
  if (convergedMs !== null) {
    cluster.network.partition(sideA, sideB);
    await cluster.waitFor(
      () => {
        sample(startMs);
        return false;
      },
      STEP_MS,
      partitionMs - STEP_MS,
    );
    splitSeen = cluster.liveCount(0) === half && cluster.liveCount(n - 1) === n - half;
    cluster.network.heal();
    const healAtMs = cluster.clock.now();
    healedMs = await cluster.waitFor(
      () => {
        sample(startMs);
        return cluster.converged(n);
      },
      STEP_MS,
      HEAL_BUDGET_MS,
    );
    if (healedMs !== null) healedMs = cluster.clock.now() - healAtMs;
  }
  return {
    scenario: 'partition-heal',
    options,
    figures: [
      { name: 'partition length', value: partitionMs, unit: 'ms' },
      { name: 'cross-partition deaths declared', value: crossDeaths, unit: '' },
      { name: 'sides split at the heal (1 = yes)', value: splitSeen ? 1 : 0, unit: '' },
      { name: 'converged after heal', value: healedMs, unit: 'ms' },
      { name: 'stated bound', value: HEAL_BUDGET_MS, unit: 'ms' },
    ],
    checks: [
      bootstrapCheck(convergedMs, n),
      check(
        `one checksum with all ${n} alive within ${HEAL_BUDGET_MS / 1000} s of the heal`,
        healedMs !== null,
        `converged ${ms(healedMs)} after the heal`,
      ),
    ],
    chart: {
      title: `partition of ${n} nodes into halves for ${partitionMs / 1000} s, then heal`,
      xLabel: 'time since the partition (s)',
      yLabel: 'share of nodes that count every member live',
      yMax: 1,
      series: [{ name: 'count all live', points: timeline }],
    },
    simulatedMs: cluster.clock.now(),
    events: cluster.clock.stats().firedEvents,
  };
}

export const partitionHealScenario: Scenario = {
  name: 'partition-heal',
  description: 'halves partitioned for --duration s (default 30), then healed; convergence within a stated bound',
  defaultNodes: 100,
  run,
};
