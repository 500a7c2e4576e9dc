// false-positives: a converged cluster runs for --duration simulated seconds (default 600) with 5%
// and then 10% packet loss, while 1% of the nodes are paused for 5 s at random times; no node
// crashes, so every death declared is a false positive. Runs with Lifeguard on (must be zero) and off
// (plain SWIM, the baseline Lifeguard's paper improves on by about 50x; it may be above zero).

import { createRandom } from '../../cluster/index.js';
import type { Check, Figure, Scenario, ScenarioOptions, ScenarioResult, Series } from '../scenario.js';
import { SimCluster } from '../sim-cluster.js';
import { bootstrapCheck, bootstrapConverged, check } from './measure.js';

const DEFAULT_DURATION_S = 600;
const LOSS_RATES = [0.05, 0.1] as const;
const PAUSE_MS = 5000;
const PAUSED_SHARE = 0.01;

interface Variant {
  lossProbability: number;
  lifeguard: boolean;
}

interface VariantOutcome {
  convergedMs: number | null;
  /** Distinct healthy nodes some member declared dead. */
  declaredDead: number;
  /** Of those, nodes that had been paused. */
  pausedDeclaredDead: number;
  /** Times (s since the loss started) of every declaration, for the chart. */
  declarations: number[];
  events: number;
  simulatedMs: number;
}

async function runVariant(options: ScenarioOptions, variant: Variant, durationMs: number): Promise<VariantOutcome> {
  const n = options.nodes;
  // Every variant replays the same bootstrap and pause schedule; only loss and Lifeguard differ.
  const random = createRandom(options.seed);
  const scenarioRandom = random.fork('scenario');
  const cluster = new SimCluster({ nodes: n, random, config: { lifeguard: variant.lifeguard } });
  let lossStartMs = Number.POSITIVE_INFINITY;
  const declaredDead = new Set<string>();
  const declarations: number[] = [];
  cluster.onMember((_index, member) => {
    member.on('fail', (info) => {
      if (cluster.clock.now() < lossStartMs) return;
      declaredDead.add(info.name);
      declarations.push((cluster.clock.now() - lossStartMs) / 1000);
    });
  });
  const convergedMs = await bootstrapConverged(cluster, scenarioRandom.fork('bootstrap'));
  const paused = new Set<string>();
  if (convergedMs !== null) {
    lossStartMs = cluster.clock.now();
    cluster.network.setDefaultLink({ lossProbability: variant.lossProbability });
    const pauseRandom = scenarioRandom.fork('pauses');
    const pausedCount = Math.max(1, Math.round(n * PAUSED_SHARE));
    const chosen = new Set<number>();
    while (chosen.size < pausedCount) chosen.add(pauseRandom.int(n));
    for (const index of chosen) {
      paused.add(cluster.names[index]!);
      const atMs = pauseRandom.next() * Math.max(0, durationMs - PAUSE_MS);
      cluster.clock.setTimer(atMs, () => {
        cluster.pause(index);
        cluster.clock.setTimer(PAUSE_MS, () => cluster.resume(index));
      });
    }
    await cluster.clock.runFor(durationMs);
  }
  return {
    convergedMs,
    declaredDead: declaredDead.size,
    pausedDeclaredDead: [...declaredDead].filter((name) => paused.has(name)).length,
    declarations,
    events: cluster.clock.stats().firedEvents,
    simulatedMs: cluster.clock.now(),
  };
}

function label(variant: Variant): string {
  return `${variant.lifeguard ? 'Lifeguard' : 'plain SWIM'}, ${variant.lossProbability * 100}% loss`;
}

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const durationMs = (options.durationS ?? DEFAULT_DURATION_S) * 1000;
  const figures: Figure[] = [];
  const checks: Check[] = [];
  const series: Series[] = [];
  let events = 0;
  let simulatedMs = 0;
  let yMax = 1;
  for (const lifeguard of [true, false]) {
    for (const lossProbability of LOSS_RATES) {
      const variant = { lossProbability, lifeguard };
      const outcome = await runVariant(options, variant, durationMs);
      events += outcome.events;
      simulatedMs += outcome.simulatedMs;
      figures.push(
        { name: `${label(variant)}: healthy nodes declared dead`, value: outcome.declaredDead, unit: '' },
        { name: `${label(variant)}: of which paused`, value: outcome.pausedDeclaredDead, unit: '' },
        { name: `${label(variant)}: declarations`, value: outcome.declarations.length, unit: '' },
      );
      if (lifeguard) {
        checks.push(
          bootstrapCheck(outcome.convergedMs, options.nodes, `${label(variant)}: `),
          check(
            `${label(variant)}: no healthy node declared dead`,
            outcome.declaredDead === 0,
            `${outcome.declaredDead} healthy nodes declared dead (${outcome.pausedDeclaredDead} of them paused)`,
          ),
        );
      }
      const points: [number, number][] = [[0, 0]];
      outcome.declarations.forEach((x, i) => points.push([x, i], [x, i + 1]));
      points.push([durationMs / 1000, outcome.declarations.length]);
      series.push({ name: label(variant), points });
      yMax = Math.max(yMax, outcome.declarations.length);
    }
  }
  return {
    scenario: 'false-positives',
    options,
    figures,
    checks,
    chart: {
      title: `false deaths among ${options.nodes} healthy nodes under loss and 5 s pauses`,
      xLabel: 'time since loss started (s)',
      yLabel: 'deaths declared (cumulative)',
      yMax,
      series,
    },
    simulatedMs,
    events,
  };
}

export const falsePositivesScenario: Scenario = {
  name: 'false-positives',
  description: '5%/10% loss and 1% of nodes paused 5 s for --duration s (default 600): false deaths, Lifeguard on vs off',
  defaultNodes: 1000,
  run,
};
