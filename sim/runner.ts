// Runs a registered scenario by name and measures how long it took for real. Wall time is returned
// beside the result, never inside it, so the result (and its JSON report) stays reproducible.

import { performance } from 'node:perf_hooks';
import type { Scenario, ScenarioOptions, ScenarioResult } from './scenario.js';
import { SCENARIOS } from './scenarios/index.js';

export class UnknownScenarioError extends Error {
  override readonly name = 'UnknownScenarioError';
  readonly code = 'sim_unknown_scenario';
  constructor(readonly scenario: string) {
    super(`no scenario named ${JSON.stringify(scenario)}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  }
}

export class InvalidScenarioOptionsError extends Error {
  override readonly name = 'InvalidScenarioOptionsError';
  readonly code = 'sim_invalid_scenario_options';
  constructor(detail: string) {
    super(`invalid scenario options: ${detail}`);
  }
}

export function findScenario(name: string): Scenario {
  const scenario = SCENARIOS.find((candidate) => candidate.name === name);
  if (scenario === undefined) throw new UnknownScenarioError(name);
  return scenario;
}

export interface ScenarioRun {
  result: ScenarioResult;
  /** Real time the run took; for the table and stderr only. */
  wallMs: number;
}

/** Runs `name` with `nodes` defaulting to the scenario's own size and `seed` to 1. */
export async function runScenario(name: string, options: Partial<ScenarioOptions> = {}): Promise<ScenarioRun> {
  const scenario = findScenario(name);
  const resolved: ScenarioOptions = { nodes: options.nodes ?? scenario.defaultNodes, seed: options.seed ?? 1 };
  if (!Number.isSafeInteger(resolved.nodes) || resolved.nodes < 2) {
    throw new InvalidScenarioOptionsError(`nodes must be an integer >= 2, got ${resolved.nodes}`);
  }
  if (!Number.isSafeInteger(resolved.seed) || resolved.seed < 0) {
    throw new InvalidScenarioOptionsError(`seed must be a non-negative integer, got ${resolved.seed}`);
  }
  if (options.durationS !== undefined) {
    if (!(Number.isFinite(options.durationS) && options.durationS > 0)) {
      throw new InvalidScenarioOptionsError(`duration must be a positive number of seconds, got ${options.durationS}`);
    }
    resolved.durationS = options.durationS;
  }
  const startedMs = performance.now();
  const result = await scenario.run(resolved);
  return { result, wallMs: performance.now() - startedMs };
}
