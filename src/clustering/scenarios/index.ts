// svc's own simulator scenarios: they run svc's invalidation stack on simulated clusters. Importing
// this module registers them with the simulator (sim/ never imports src/).
import { registerScenario } from '../../../sim/scenarios/index.js';
import { catchUpScenario } from './catch-up.js';
import { invalidationFaultsScenario } from './invalidation-faults.js';
import { leaseFaultsScenario } from './lease-faults.js';
import { strongVsEventualScenario } from './strong-vs-eventual.js';

registerScenario(strongVsEventualScenario);
registerScenario(catchUpScenario);
registerScenario(invalidationFaultsScenario);
registerScenario(leaseFaultsScenario);
