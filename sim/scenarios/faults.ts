// faults: the seeded safety-and-liveness run (TigerBeetle VOPR style). The seed picks one fault plan
// and its details; the plan runs for --duration simulated seconds (default 60), everything heals, and
// the cluster must converge within a fixed budget. Safety: no node is declared dead unless a fault
// justifies it (it crashed, or a partition separated it from the one declaring). Liveness: after the
// heal, one checksum everywhere with every running node alive. Plans:
//   - crash: one node crashes while links lose 5% of packets and another node is paused for 2 s;
//   - partition: a minority is cut off (both ways) for 10 s, then the partition heals;
//   - restart: one node crashes and a fresh process takes its address 20 s later and rejoins.

import { createRandom } from '../../cluster/index.js';
import type { Scenario, ScenarioOptions, ScenarioResult } from '../scenario.js';
import { SimCluster } from '../sim-cluster.js';
import { bootstrapCheck, bootstrapConverged, check, ms, shareSeries } from './measure.js';

const PLANS = ['crash', 'partition', 'restart'] as const;
type Plan = (typeof PLANS)[number];

const DEFAULT_DURATION_S = 60;
const FAULT_START_MS = 5000;
const LOSS = 0.05;
const SHORT_PAUSE_MS = 2000;
const PARTITION_MS = 10_000;
const RESTART_AFTER_MS = 20_000;
/** Fixed budget for convergence once every fault has healed. */
export const FAULTS_HEAL_BUDGET_MS = 60_000;
const STEP_MS = 100;

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const n = options.nodes;
  const durationMs = (options.durationS ?? DEFAULT_DURATION_S) * 1000;
  const random = createRandom(options.seed);
  const planRandom = random.fork('plan');
  const plan: Plan = PLANS[planRandom.int(PLANS.length)]!;
  const cluster = new SimCluster({ nodes: n, random });
  const victim = 1 + planRandom.int(n - 1);
  const paused = 1 + ((victim - 1 + 1 + planRandom.int(n - 2)) % (n - 1));
  const minority = new Set<number>();
  while (minority.size < Math.max(1, Math.floor((n - 1) / 3))) minority.add(1 + planRandom.int(n - 1));

  let faultsStarted = false;
  let crashed = false;
  let partitioned = false;
  const unjustified: string[] = [];
  const firstDeathAt: (number | null)[] = new Array<number | null>(n).fill(null);
  cluster.onMember((_observer, member) => {
    member.on('fail', (info) => {
      const target = cluster.indexOf(info.name);
      const now = cluster.clock.now();
      if (firstDeathAt[target] === null) firstDeathAt[target] = now;
      // A partition justifies every death from its start until the cluster reconverges: the deaths it
      // causes spread by gossip to both sides once it heals.
      const justified = faultsStarted && ((target === victim && crashed) || partitioned);
      if (!justified) unjustified.push(`${member.name} declared ${info.name} dead at ${now.toFixed(1)} ms`);
    });
  });

  const convergedMs = await bootstrapConverged(cluster, random.fork('bootstrap'));
  let healedMs: number | null = null;
  let expectedLive = n;
  const faultsAtMs = cluster.clock.now();
  if (convergedMs !== null) {
    faultsStarted = true;
    const at = (delayMs: number, action: () => void) => cluster.clock.setTimer(delayMs, action);
    if (plan === 'crash') {
      cluster.network.setDefaultLink({ lossProbability: LOSS });
      at(FAULT_START_MS, () => {
        crashed = true;
        cluster.crash(victim);
      });
      at(2 * FAULT_START_MS, () => cluster.pause(paused));
      at(2 * FAULT_START_MS + SHORT_PAUSE_MS, () => cluster.resume(paused));
      expectedLive = n - 1;
    } else if (plan === 'partition') {
      const inside = [...minority].map((i) => cluster.addresses[i]!);
      const outside = cluster.addresses.filter((_, i) => !minority.has(i));
      at(FAULT_START_MS, () => {
        partitioned = true;
        cluster.network.partition(inside, outside);
      });
      at(FAULT_START_MS + PARTITION_MS, () => cluster.network.heal());
    } else {
      at(FAULT_START_MS, () => {
        crashed = true;
        cluster.crash(victim);
      });
      at(FAULT_START_MS + RESTART_AFTER_MS, () => void cluster.restart(victim, [0]));
    }
    await cluster.clock.runFor(durationMs);
    // Heal whatever is left: loss off, links whole. A partition's deaths stay justified while the
    // cluster reconverges, since they were declared on information the partition caused.
    cluster.network.setDefaultLink({ lossProbability: 0 });
    cluster.network.heal();
    healedMs = await cluster.waitFor(() => cluster.converged(expectedLive), STEP_MS, FAULTS_HEAL_BUDGET_MS);
  }
  const endMs = cluster.clock.now();
  return {
    scenario: 'faults',
    options,
    figures: [
      { name: `plan ${plan}: fault phase`, value: durationMs, unit: 'ms' },
      { name: 'unjustified deaths', value: unjustified.length, unit: '' },
      { name: 'converged after the heal', value: healedMs, unit: 'ms' },
    ],
    checks: [
      bootstrapCheck(convergedMs, n),
      check('safety: no node declared dead without a fault that justifies it', unjustified.length === 0, unjustified.slice(0, 3).join('; ') || 'none'),
      check(
        `liveness: one checksum with ${expectedLive} alive within ${FAULTS_HEAL_BUDGET_MS / 1000} s of the heal`,
        healedMs !== null,
        `converged ${ms(healedMs)} after the heal`,
      ),
    ],
    chart: {
      title: `faults (${plan}) among ${n} nodes`,
      xLabel: 'time since the fault phase began (s)',
      yLabel: 'share of nodes someone declared dead',
      yMax: 1,
      series: [shareSeries('declared dead', firstDeathAt.map((t) => (t === null ? null : t - faultsAtMs)), n, endMs - faultsAtMs)],
    },
    simulatedMs: endMs,
    events: cluster.clock.stats().firedEvents,
  };
}

export const faultsScenario: Scenario = {
  name: 'faults',
  description: 'seeded fault plan (crash+loss+pause, partition, or restart), then heal: safety and liveness',
  defaultNodes: 12,
  run,
};
