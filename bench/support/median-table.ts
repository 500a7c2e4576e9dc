// The table a rotating benchmark prints: for each target, the medians over its rounds of throughput,
// latency and the server's CPU per request, and the errors of all its runs.
import type { LoadFigures } from './load.js';
import { median } from './median-interval.js';

/** Figures of a run that measured its server's CPU. */
export type MeasuredFigures = LoadFigures & { cpuUsPerRequest: number };

export function printMedianTable(targets: readonly { name: string; runs: readonly MeasuredFigures[] }[]): void {
  const width = Math.max(28, ...targets.map((target) => target.name.length));
  console.log(`${'target'.padEnd(width)}   req/s      p50 ms   p99 ms   server CPU µs/req   errors`);
  for (const { name, runs } of targets) {
    const of = (figure: (run: MeasuredFigures) => number): number => median(runs.map(figure));
    console.log(
      `${name.padEnd(width)} ${of((r) => r.requestsPerSecond).toFixed(0).padStart(8)}   ${of((r) => r.p50Ms).toFixed(2).padStart(6)}   ${of((r) => r.p99Ms)
        .toFixed(2)
        .padStart(6)}   ${of((r) => r.cpuUsPerRequest).toFixed(1).padStart(17)}   ${runs.reduce((sum, r) => sum + r.errors, 0)}`,
    );
  }
}
