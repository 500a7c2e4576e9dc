// catch-up: one node is down while the others make --duration seconds of invalidations at 1,000 a
// second (10,000 by default: purges of a pool of URLs, bans, refreshes, batches), with 1% packet loss;
// then it restarts with what it kept on disk. It must have every invalidation it missed (or one that
// covers it) before it counts as caught up (and serves its cache again), apply none twice and each as
// of when it was made. Before issue 16 a node missed all but the last 1,000 and applied those as new.
import { createRandom } from '../../../cluster/index.js';
import type { Scenario, ScenarioOptions, ScenarioResult } from '../../../sim/scenario.js';
import { bootstrapCheck, bootstrapConverged, check, ms, shareSeries } from '../../../sim/scenarios/measure.js';
import type { ClusterMode } from '../invalidation-delivery.js';
import { appliedAsNew, appliedTwice, firstOf, honoured, madeInvalidations, makeInvalidation } from './invalidation-checks.js';
import { SvcSimNodes } from './svc-sim-nodes.js';

export const INVALIDATIONS_PER_SECOND = 1_000;
const DEFAULT_DURATION_S = 10;
const LOSS = 0.01;
/** Time the returning node has to catch up: a join, and pages of 5,000 URLs. */
export const CATCH_UP_BUDGET_MS = 60_000;
/** Long enough for a sync heartbeat (10 s) before the crash, as a node that had been running has one. */
const RUN_BEFORE_CRASH_MS = 11_000;

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const n = options.nodes;
  const count = Math.round((options.durationS ?? DEFAULT_DURATION_S) * INVALIDATIONS_PER_SECOND);
  const random = createRandom(options.seed);
  const plan = random.fork('plan');
  const mode: ClusterMode = plan.int(2) === 0 ? 'strong' : 'eventual';
  const victim = 1 + plan.int(n - 1);
  const nodes = new SvcSimNodes({ nodes: n, random }, { mode });
  const { cluster } = nodes;
  const convergedMs = await bootstrapConverged(cluster, random.fork('bootstrap'));
  const checks = [bootstrapCheck(convergedMs, n)];
  if (convergedMs === null) return result(options, checks, [], 0, 0, nodes);

  nodes.disks[victim]!.holdsEntries = true;
  await cluster.clock.runFor(RUN_BEFORE_CRASH_MS);
  nodes.crash(victim);
  cluster.network.setDefaultLink({ lossProbability: LOSS });
  const live = [...cluster.names.keys()].filter((i) => i !== victim);
  const pending: Promise<unknown>[] = [];
  const stepMs = 1_000 / INVALIDATIONS_PER_SECOND;
  for (let i = 0; i < count; i++) {
    pending.push(makeInvalidation(nodes, live[plan.int(live.length)]!, plan));
    await nodes.settle();
    await cluster.clock.runFor(stepMs);
  }
  await nodes.finish(pending);
  await cluster.clock.runFor(5_000);

  const restartMs = cluster.clock.now();
  await nodes.restart(victim, [live[0]!]);
  const waited = await cluster.waitFor(() => nodes.life(victim).caughtUp !== undefined, 50, CATCH_UP_BUDGET_MS);
  const caughtUp = nodes.life(victim).caughtUp;
  await cluster.clock.runFor(5_000);
  const made = madeInvalidations(nodes);
  const engine = nodes.disks[victim]!.engine;
  const missedAtCatchUp = caughtUp === undefined ? made : made.filter((m) => !honoured(engine, m, caughtUp.atMs));
  const missedByLive = live.flatMap((i) => made.filter((m) => !honoured(nodes.disks[i]!.engine, m, cluster.clock.now())).map((m) => `${m.id}@${i}`));
  const twice = appliedTwice(nodes);
  const asNew = appliedAsNew(nodes, made);
  checks.push(
    check(`the returning node caught up within ${CATCH_UP_BUDGET_MS / 1000} s`, waited !== null, `after ${ms(waited)}`),
    check(
      'before counting as caught up it had every invalidation it missed, or one covering it',
      missedAtCatchUp.length === 0,
      firstOf(missedAtCatchUp.map((m) => m.id), 'missing'),
    ),
    check('every live node has every invalidation, or one covering it', missedByLive.length === 0, firstOf(missedByLive, 'missing')),
    check('no node applied an invalidation twice', twice.length === 0, firstOf(twice, 'repeated')),
    check('each applied as of when it was made, never as new', asNew.length === 0, firstOf(asNew, 'applied as new')),
    check('no gap: the absence was shorter than the logs reach back', engine.gapsBeforeMs.length === 0, `${engine.gapsBeforeMs.length} gaps`),
  );
  const figures = [
    { name: 'mode', value: mode === 'strong' ? 1 : 0, unit: '(1 strong, 0 eventual)' },
    { name: 'invalidations made while the node was down', value: made.length - (caughtUp === undefined ? 0 : 0), unit: '' },
    { name: "invalidations held in the peer's log (compacted)", value: nodes.life(live[0]!).log.size, unit: '' },
    { name: 'invalidations applied by the catch-up', value: caughtUp?.kind === 'peer' ? caughtUp.applied : null, unit: '' },
    { name: 'catch-up time after the restart', value: caughtUp === undefined ? null : caughtUp.atMs - restartMs, unit: 'ms' },
  ];
  const appliedTimes = engine.calls.filter((call) => call.calledMs >= restartMs).map((call) => call.calledMs - restartMs);
  return result(options, checks, figures, appliedTimes.length, Math.max(0, ...appliedTimes), nodes, appliedTimes);
}

function result(
  options: ScenarioOptions,
  checks: ScenarioResult['checks'],
  figures: ScenarioResult['figures'],
  total: number,
  endMs: number,
  nodes: SvcSimNodes,
  times: number[] = [],
): ScenarioResult {
  return {
    scenario: 'catch-up',
    options,
    figures,
    checks,
    chart: {
      title: `a node back after ${options.durationS ?? DEFAULT_DURATION_S} s of invalidations`,
      xLabel: 'time since its restart (s)',
      yLabel: 'share of what it applied on its return',
      yMax: 1,
      series: [shareSeries('applied', times, Math.max(1, total), endMs)],
    },
    simulatedMs: nodes.cluster.clock.now(),
    events: nodes.cluster.clock.stats().firedEvents,
  };
}

export const catchUpScenario: Scenario = {
  name: 'catch-up',
  description: `a node down during --duration s of invalidations (${INVALIDATIONS_PER_SECOND}/s, default ${DEFAULT_DURATION_S} s: 10,000) catches up before it serves`,
  defaultNodes: 5,
  run,
};
