// Turns a scenario result into what people read: a JSON document that is byte-identical for the same
// scenario, options and seed (keys sorted, numbers rounded, no wall-clock figures), a text table, and
// the one command that replays a run.

import type { ScenarioResult } from './scenario.js';
import { roundTo } from './stats.js';

/** Decimals kept for every number in the JSON report: microseconds when the unit is milliseconds. */
const JSON_DECIMALS = 3;

/** The command that replays exactly this run. */
export function replayCommand(result: ScenarioResult): string {
  const { nodes, seed, durationS } = result.options;
  const duration = durationS === undefined ? '' : ` --duration ${durationS}`;
  return `svc sim run ${result.scenario} --nodes ${nodes} --seed ${seed}${duration}`;
}

export function passed(result: ScenarioResult): boolean {
  return result.checks.every((check) => check.passed);
}

function canonical(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? roundTo(value, JSON_DECIMALS) : null;
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const field = (value as Record<string, unknown>)[key];
      if (field !== undefined) sorted[key] = canonical(field);
    }
    return sorted;
  }
  return value;
}

/** The JSON report: the result plus its verdict and replay command, keys sorted, numbers rounded. */
export function reportJson(result: ScenarioResult): string {
  const document = { ...result, passed: passed(result), replay: replayCommand(result) };
  return `${JSON.stringify(canonical(document), null, 2)}\n`;
}

function formatValue(value: number | null): string {
  if (value === null) return 'not reached';
  return Number.isInteger(value) ? String(value) : value.toFixed(Math.abs(value) >= 100 ? 1 : 3);
}

function pad(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
}

/** Every failed check, each with the seed and the command that replays the run. */
export function failureLines(result: ScenarioResult): string[] {
  return result.checks
    .filter((check) => !check.passed)
    .map((check) => `FAILED ${result.scenario}: ${check.name} (${check.detail}); seed ${result.options.seed}; replay: ${replayCommand(result)}`);
}

/** The text report; `wallMs` (how long the run took for real) appears here and never in the JSON. */
export function reportTable(result: ScenarioResult, wallMs?: number): string {
  const { nodes, seed, durationS } = result.options;
  const lines = [
    `scenario ${result.scenario}: ${nodes} nodes, seed ${seed}${durationS === undefined ? '' : `, ${durationS} s`}`,
    '',
    ...pad([['figure', 'value', 'unit'], ...result.figures.map((f) => [f.name, formatValue(f.value), f.unit])]),
    '',
    ...pad([['check', 'result', 'detail'], ...result.checks.map((c) => [c.name, c.passed ? 'pass' : 'FAIL', c.detail])]),
    '',
  ];
  const simulatedS = (result.simulatedMs / 1000).toFixed(1);
  const cost = wallMs === undefined ? '' : `, wall time ${(wallMs / 1000).toFixed(2)} s`;
  lines.push(`simulated ${simulatedS} s in ${result.events} events${cost}`);
  const failures = failureLines(result);
  lines.push(failures.length === 0 ? 'all checks passed' : failures.join('\n'));
  return `${lines.join('\n')}\n`;
}
