// join: N nodes start and join through one seed node (node 0) within one second, as a rolling start
// would; measures the time until every node reports the same membership checksum with all N alive.

import { createRandom } from '../../cluster/index.js';
import type { Scenario, ScenarioOptions, ScenarioResult } from '../scenario.js';
import { SimCluster } from '../sim-cluster.js';
import { check, ms, shareSeries } from './measure.js';

/** Joins are spread over this window, so the seed is not hit by N pushes in the same millisecond. */
const JOIN_SPREAD_MS = 1000;
/** Convergence is checked this often; the measured time is rounded up to it. */
const STEP_MS = 100;
/** Stated bound on convergence: memberlist converges a LAN cluster of 1,000 in well under this. */
const BUDGET_MS = 120_000;

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const random = createRandom(options.seed);
  const cluster = new SimCluster({ nodes: options.nodes, random });
  const n = options.nodes;
  const everyoneKnownAtMs: (number | null)[] = new Array<number | null>(n).fill(null);
  await cluster.bootstrap(random.fork('scenario'), JOIN_SPREAD_MS);
  const convergedMs = await cluster.waitFor(
    () => {
      const now = cluster.clock.now();
      for (let i = 0; i < n; i++) {
        if (everyoneKnownAtMs[i] === null && cluster.liveCount(i) === n) everyoneKnownAtMs[i] = now;
      }
      return cluster.converged(n);
    },
    STEP_MS,
    BUDGET_MS,
  );
  const endMs = cluster.clock.now();
  const lastKnown = everyoneKnownAtMs.reduce<number>((latest, time) => Math.max(latest, time ?? 0), 0);
  return {
    scenario: 'join',
    options,
    figures: [
      { name: 'converged', value: convergedMs, unit: 'ms' },
      { name: 'last node to know all members', value: everyoneKnownAtMs.includes(null) ? null : lastKnown, unit: 'ms' },
      { name: 'join spread', value: JOIN_SPREAD_MS, unit: 'ms' },
    ],
    checks: [
      check(
        `one checksum with all ${n} alive within ${BUDGET_MS / 1000} s`,
        convergedMs !== null,
        `converged after ${ms(convergedMs)} (checked every ${STEP_MS} ms)`,
      ),
    ],
    chart: {
      title: `join of ${n} nodes through one seed`,
      xLabel: 'time since the first start (s)',
      yLabel: 'share of nodes',
      yMax: 1,
      series: [shareSeries('knows all members alive', everyoneKnownAtMs, n, endMs)],
    },
    simulatedMs: endMs,
    events: cluster.clock.stats().firedEvents,
  };
}

export const joinScenario: Scenario = {
  name: 'join',
  description: 'N nodes join through one seed; time to one membership checksum with all alive',
  defaultNodes: 100,
  run,
};
