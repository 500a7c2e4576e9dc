// lease-faults: a strong cluster (svc's leases and serve gate on every node) in which, per seed, some
// nodes are paused (SIGSTOP, a GC pause) or cut off by a partition into a minority, for 5-30 s, while
// the others purge what every node holds. Every node reads every URL every 100 ms from the fault to
// 20 s after it ends, as svc's data plane would: from its cache when its gate lets the entry through
// (a lease, not held back) and its engine has not applied a purge of it. A read from the cache of a
// URL whose purge was already answered is a stale read: there must be none, in the fault or after.
// A paused node answers nothing while paused, so it is read only once it resumes.
import { createRandom } from '../../../cluster/index.js';
import type { Scenario, ScenarioOptions, ScenarioResult } from '../../../sim/scenario.js';
import { bootstrapCheck, bootstrapConverged, check } from '../../../sim/scenarios/measure.js';
import { firstOf } from './invalidation-checks.js';
import { SvcSimNodes } from './svc-sim-nodes.js';

/** svc's default cluster.lease. */
const LEASE_MS = 8_000;
const URLS = 20;
const READ_EVERY_MS = 100;
const AFTER_FAULT_MS = 20_000;
const MIN_FAULT_MS = 5_000;
const MAX_FAULT_MS = 30_000;

interface Purge {
  url: string;
  madeMs: number;
  answeredMs: number | undefined;
}

async function run(options: ScenarioOptions): Promise<ScenarioResult> {
  const n = options.nodes;
  const random = createRandom(options.seed);
  const plan = random.fork('plan');
  const kind = plan.int(2) === 0 ? 'pause' : 'partition';
  const minoritySize = kind === 'pause' ? 1 + plan.int(Math.max(1, Math.floor((n - 1) / 2))) : Math.max(1, Math.floor((n - 1) / 2));
  const order = [...Array(n).keys()].sort(() => plan.next() - 0.5);
  const minority = order.slice(0, minoritySize).sort((a, b) => a - b);
  const majority = order.slice(minoritySize).sort((a, b) => a - b);
  const faultMs = MIN_FAULT_MS + plan.int(MAX_FAULT_MS - MIN_FAULT_MS);

  const nodes = new SvcSimNodes({ nodes: n, random }, { mode: 'strong', leaseMs: LEASE_MS });
  const { cluster } = nodes;
  const convergedMs = await bootstrapConverged(cluster, random.fork('bootstrap'));
  const checks = [bootstrapCheck(convergedMs, n)];
  if (convergedMs === null) return result(options, checks, [], nodes);
  // Every node fetched every URL before the fault and holds it (its requestTimeMs).
  const fetchedMs = cluster.clock.now();
  for (const disk of nodes.disks) disk.holdsEntries = true;
  await cluster.clock.runFor(2 * LEASE_MS);
  const leasedBefore = [...Array(n).keys()].filter((i) => nodes.life(i).serving!.guard.leased()).length;

  const startMs = cluster.clock.now();
  const addresses = (indexes: readonly number[]) => indexes.map((i) => cluster.addresses[i]!);
  if (kind === 'pause') for (const i of minority) cluster.pause(i);
  else cluster.network.partition(addresses(majority), addresses(minority));

  const purges: Purge[] = [];
  const stale: string[] = [];
  let cacheReadsInFault = 0;
  const urls = Array.from({ length: URLS }, (_, i) => `http://shop.example/held/${i}`);
  const purgeTimes = urls.map(() => startMs + plan.int(faultMs));
  const endMs = startMs + faultMs;
  let healed = false;
  while (cluster.clock.now() < endMs + AFTER_FAULT_MS) {
    const now = cluster.clock.now();
    if (!healed && now >= endMs) {
      healed = true;
      if (kind === 'pause') for (const i of minority) cluster.resume(i);
      else cluster.network.heal();
    }
    for (const [u, at] of purgeTimes.entries()) {
      if (at > now || purges.some((purge) => purge.url === urls[u])) continue;
      const origin = majority[plan.int(majority.length)]!;
      const purge: Purge = { url: urls[u]!, madeMs: now, answeredMs: undefined };
      purges.push(purge);
      void nodes.life(origin).invalidator.purge(purge.url).then(() => (purge.answeredMs = cluster.clock.now()));
    }
    for (let i = 0; i < n; i++) {
      if (kind === 'pause' && !healed && minority.includes(i)) continue;
      const { gate } = nodes.life(i).serving!;
      const engine = nodes.disks[i]!.engine;
      for (const url of urls) {
        if (!gate.servable({ requestTimeMs: fetchedMs })) continue;
        const purged = engine.calls.some((call) => call.type === 'purge' && call.target === url && call.calledMs <= now);
        if (purged) continue;
        if (!healed && minority.includes(i)) cacheReadsInFault++;
        const answered = purges.find((purge) => purge.url === url && purge.answeredMs !== undefined && purge.answeredMs <= now);
        if (answered !== undefined) stale.push(`${cluster.names[i]} served ${url} at ${now - startMs} ms, purged and answered at ${answered.answeredMs! - startMs} ms`);
      }
    }
    await nodes.settle();
    await cluster.clock.runFor(READ_EVERY_MS);
  }

  const answerMs = purges.map((purge) => (purge.answeredMs === undefined ? null : purge.answeredMs - purge.madeMs));
  const unanswered = answerMs.filter((value) => value === null).length;
  const leasedAfter = [...Array(n).keys()].filter((i) => nodes.life(i).serving!.guard.leased()).length;
  const caughtUpAfter = minority.filter((i) => nodes.life(i).caughtUp !== undefined && nodes.life(i).serving!.gate.servable({ requestTimeMs: cluster.clock.now() })).length;
  checks.push(
    check('every node held a lease before the fault', leasedBefore === n, `${leasedBefore} of ${n}`),
    check('no node served from its cache a URL whose purge was answered', stale.length === 0, firstOf(stale, 'stale')),
    check('every purge was answered', unanswered === 0, `${unanswered} not answered`),
    check(`every node holds a lease ${AFTER_FAULT_MS / 1000} s after the fault`, leasedAfter === n, `${leasedAfter} of ${n}`),
    check('every node of the minority serves from its cache again', caughtUpAfter === minority.length, `${caughtUpAfter} of ${minority.length}`),
  );
  const answered = answerMs.filter((value): value is number => value !== null);
  const figures = [
    { name: 'fault', value: kind === 'pause' ? 1 : 0, unit: '(1 pause, 0 partition)' },
    { name: 'nodes cut off or paused', value: minority.length, unit: '' },
    { name: 'fault length', value: faultMs, unit: 'ms' },
    { name: 'purges answered, slowest', value: answered.length === 0 ? null : Math.max(...answered), unit: 'ms' },
    { name: 'cache reads at the minority during the fault (before its lease lapsed)', value: cacheReadsInFault, unit: '' },
    { name: 'stale reads', value: stale.length, unit: '' },
  ];
  return result(options, checks, figures, nodes);
}

function result(options: ScenarioOptions, checks: ScenarioResult['checks'], figures: ScenarioResult['figures'], nodes: SvcSimNodes): ScenarioResult {
  return {
    scenario: 'lease-faults',
    options,
    figures,
    checks,
    chart: { title: 'purges answered under a pause or a partition', xLabel: 'seed', yLabel: 'stale reads', yMax: 1, series: [] },
    simulatedMs: nodes.cluster.clock.now(),
    events: nodes.cluster.clock.stats().firedEvents,
  };
}

export const leaseFaultsScenario: Scenario = {
  name: 'lease-faults',
  description: `strong mode with leases (${LEASE_MS / 1000} s): a minority paused or cut off for ${MIN_FAULT_MS / 1000}-${MAX_FAULT_MS / 1000} s while the majority purges; no node serves an answered purge's object`,
  defaultNodes: 5,
  run,
};
