// The simulated transport (sim/) against the shared conformance suite. Its time is virtual: `settle`
// runs the network's clock until the awaited promise settles. It has no real ports, so the rebind
// half of the shutdown case is skipped with that reason.
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { createRandom } from '../../cluster/seeded-random.js';
import { SimNetwork } from '../../sim/sim-network.js';
import { transportConformance } from './conformance.js';

const SEED = 6;
/** Virtual time a case may take before it is reported as stuck (no timeout in the suite is longer). */
const VIRTUAL_BUDGET_MS = 120_000;
const STEP_MS = 5;

async function runUntilSettled<T>(network: SimNetwork, promise: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = promise.finally(() => {
    settled = true;
  });
  tracked.catch(() => undefined);
  const deadlineMs = network.clock.now() + VIRTUAL_BUDGET_MS;
  while (!settled) {
    if (network.clock.now() > deadlineMs) throw new Error(`not settled within ${VIRTUAL_BUDGET_MS} ms of virtual time (seed ${SEED})`);
    await network.clock.runFor(STEP_MS);
    await nextMacrotask();
  }
  return tracked;
}

transportConformance(`sim (seed ${SEED}, native broadcast)`, {
  async create(count) {
    const network = new SimNetwork({ random: createRandom(SEED), nativeBroadcast: true });
    const nodes = Array.from({ length: count }, (_, i) => network.addNode(`10.0.0.${i + 1}:7946`));
    await Promise.all(nodes.map((node) => node.transport.start()));
    return {
      transports: nodes.map((node) => node.transport),
      settle: (promise) => runUntilSettled(network, promise),
      // No node was ever added there: the network answers that nothing listens.
      refusedAddress: () => Promise.resolve('10.0.0.250:7946'),
      async unresponsivePeer() {
        const address = '10.0.0.251:7946';
        await network.addNode(address).transport.start();
        network.pause(address);
        return { address, close: () => Promise.resolve(network.crash(address)) };
      },
      async cleanup() {
        await Promise.all(nodes.map((node) => node.transport.stop()));
      },
    };
  },
  noPortsReason: 'the simulated network has no real ports to bind again',
});
