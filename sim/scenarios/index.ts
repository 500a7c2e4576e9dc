// The registry of scenarios `svc sim list` shows and `svc sim run` runs, in the order listed.

import type { Scenario } from '../scenario.js';
import { broadcastScenario } from './broadcast.js';
import { crashDetectionScenario } from './crash-detection.js';
import { falsePositivesScenario } from './false-positives.js';
import { faultsScenario } from './faults.js';
import { joinScenario } from './join.js';
import { partitionHealScenario } from './partition-heal.js';
import { strongVsEventualScenario } from './strong-vs-eventual.js';

export const SCENARIOS: readonly Scenario[] = [joinScenario, crashDetectionScenario, falsePositivesScenario, broadcastScenario, partitionHealScenario, faultsScenario, strongVsEventualScenario];
