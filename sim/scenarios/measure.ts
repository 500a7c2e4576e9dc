// Helpers the scenarios share: turning event times into chart series and checks into results.

import type { Random } from '../../cluster/index.js';
import type { Check, Series } from '../scenario.js';
import type { SimCluster } from '../sim-cluster.js';
import { roundTo } from '../stats.js';

/**
 * A step series of the share of `total` subjects whose event happened by each time: `timesMs` are the
 * event times relative to the series' zero (null: never happened). Times go to seconds on the x axis.
 */
export function shareSeries(name: string, timesMs: readonly (number | null)[], total: number, endMs: number): Series {
  const sorted = timesMs.filter((time): time is number => time !== null).sort((a, b) => a - b);
  const points: [number, number][] = [[0, 0]];
  let reached = 0;
  for (const timeMs of sorted) {
    const x = roundTo(timeMs / 1000, 3);
    points.push([x, reached / total]);
    reached++;
    points.push([x, reached / total]);
  }
  points.push([roundTo(Math.max(endMs, sorted.at(-1) ?? 0) / 1000, 3), reached / total]);
  return { name, points: thin(points) };
}

/** Keeps a long step series drawable: at most ~`limit` points, always keeping the first and last. */
function thin(points: [number, number][], limit = 600): [number, number][] {
  if (points.length <= limit) return points;
  const stride = Math.ceil(points.length / limit);
  const kept = points.filter((_, i) => i % stride === 0);
  const last = points.at(-1);
  if (last !== undefined && kept.at(-1) !== last) kept.push(last);
  return kept;
}

export function check(name: string, passed: boolean, detail: string): Check {
  return { name, passed, detail };
}

/** Formats milliseconds for check details: "1234.5 ms", or "never" for null. */
export function ms(value: number | null): string {
  return value === null ? 'never' : `${roundTo(value, 1)} ms`;
}

/** Convergence after a bootstrap is checked this often. */
export const CONVERGE_STEP_MS = 100;
/** Stated bound on the bootstrap of every scenario (the join scenario measures it precisely). */
export const BOOTSTRAP_BUDGET_MS = 120_000;
/** Quiet time after convergence, so the joins' gossip has drained before a scenario's faults. */
export const SETTLE_MS = 5000;
/** Rolling start: joins spread over one second. */
export const JOIN_SPREAD_MS = 1000;

/**
 * Starts the cluster, waits for it to converge (null when it did not within BOOTSTRAP_BUDGET_MS) and
 * lets it settle. Resolves to the convergence time.
 */
export async function bootstrapConverged(cluster: SimCluster, random: Random): Promise<number | null> {
  await cluster.bootstrap(random, JOIN_SPREAD_MS);
  const convergedMs = await cluster.waitFor(() => cluster.converged(cluster.size), CONVERGE_STEP_MS, BOOTSTRAP_BUDGET_MS);
  if (convergedMs !== null) await cluster.clock.runFor(SETTLE_MS);
  return convergedMs;
}

export function bootstrapCheck(convergedMs: number | null, nodes: number, prefix = ''): Check {
  return check(
    `${prefix}bootstrap: one checksum with all ${nodes} alive within ${BOOTSTRAP_BUDGET_MS / 1000} s`,
    convergedMs !== null,
    `converged after ${ms(convergedMs)}`,
  );
}
