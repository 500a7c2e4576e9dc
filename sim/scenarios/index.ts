// The registry of scenarios `svc sim list` shows and `svc sim run` runs, in the order listed. The
// cluster library's own scenarios are built in; a consumer of the library (svc's invalidation
// delivery, in src/) registers its scenarios here, so sim/ never imports the consumer.

import type { Scenario } from '../scenario.js';
import { broadcastScenario } from './broadcast.js';
import { crashDetectionScenario } from './crash-detection.js';
import { falsePositivesScenario } from './false-positives.js';
import { faultsScenario } from './faults.js';
import { joinScenario } from './join.js';
import { partitionHealScenario } from './partition-heal.js';

export const SCENARIOS: Scenario[] = [joinScenario, crashDetectionScenario, falsePositivesScenario, broadcastScenario, partitionHealScenario, faultsScenario];

export class DuplicateScenarioError extends Error {
  override readonly name = 'DuplicateScenarioError';
  readonly code = 'sim_duplicate_scenario';
  constructor(readonly scenario: string) {
    super(`a scenario named ${JSON.stringify(scenario)} is registered already`);
  }
}

/** Adds a consumer's scenario; registering the same scenario object again is a no-op. */
export function registerScenario(scenario: Scenario): void {
  const existing = SCENARIOS.find((candidate) => candidate.name === scenario.name);
  if (existing === scenario) return;
  if (existing !== undefined) throw new DuplicateScenarioError(scenario.name);
  SCENARIOS.push(scenario);
}
