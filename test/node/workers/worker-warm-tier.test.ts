// A data-plane worker's view of the warm tier, through the store suites of its interfaces, driven as
// the node drives it: the view reads a real lmdb directory with its own reader, and its writes travel
// over a real message channel, checked against the thread message table on arrival as the main
// thread checks them, to the primary's SharedWarmWrites over the warm store the primary owns, beside
// a hot tier and an invalidation engine wired as the node wires them. A write has settled once the
// channel delivered it (a barrier answered after it, as the worker answers the main thread's
// `barrier` call), the primary flushed it, and the view renewed its read snapshot.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entrySizeBytes } from '../../../src/cache/entry.js';
import { createInvalidator } from '../../../src/invalidation/create-invalidator.js';
import { createLogger } from '../../../src/observe/logger.js';
import { createHotStore } from '../../../src/store/hot-store.js';
import { TieredCache } from '../../../src/store/tiered-cache.js';
import { WarmReader } from '../../../src/store/warm/warm-reader.js';
import { openWarmStore } from '../../../src/store/warm/warm-store.js';
import { SharedWarmWrites } from '../../../src/node/workers/shared-warm-writes.js';
import { checkUp, type UpMessage } from '../../../src/node/workers/thread-messages.js';
import { WorkerWarmTier } from '../../../src/node/workers/worker-warm-tier.js';
import { LogLines } from '../../invalidation/fixture.js';
import { cacheStoreConformance, demotionTargetConformance, type StoreFactory } from '../../store/conformance.js';

/** What the primaries logged, over every store the suites opened: no error (a record dropped, a sweep failed). */
const primaryLogs = new LogLines();

after(() => {
  assert.deepEqual(primaryLogs.lines.filter((line) => line.level === 'error'), []);
});

const openWorkerView: StoreFactory<WorkerWarmTier> = async ({ maxBytes }) => {
  const path = await mkdtemp(join(tmpdir(), 'svc-worker-warm-'));
  const logger = createLogger({ destination: primaryLogs });
  // The primary: it opens the warm tier first, as the node does before it starts its workers.
  const primary = await openWarmStore({ path, maxBytes, writeQueueLength: 10_000 });
  const cache = new TieredCache(createHotStore({ maxBytes: 1024 * 1024 }), primary);
  const engine = createInvalidator({ cache, logger });
  await engine.start();
  const writes = new SharedWarmWrites({ warm: primary, admissible: (entry) => engine.admissible(entry), logger });

  const { port1: workerPort, port2: mainPort } = new MessageChannel();
  const barriers = new Map<number, () => void>();
  let nextBarrier = 1;
  /** Messages the main thread would not apply: none may come from the view. */
  const unfit: string[] = [];
  mainPort.on('message', (data: unknown) => {
    const checked = checkUp(data);
    if (!checked.ok) unfit.push(checked.issue);
    else if (checked.message.kind === 'warm') writes.apply(checked.message);
    else if (checked.message.kind === 'reply') barriers.get(checked.message.id)?.();
    else unfit.push(`a ${checked.message.kind} message`);
  });
  const view = new WorkerWarmTier(WarmReader.open(path), (write) => workerPort.postMessage(write));

  /** Resolves once every write the view sent before has reached the primary (one channel keeps the order). */
  const arrived = (): Promise<void> =>
    new Promise((resolve) => {
      const id = nextBarrier++;
      barriers.set(id, () => {
        barriers.delete(id);
        resolve();
      });
      const answer: UpMessage = { kind: 'reply', id, result: null };
      workerPort.postMessage(answer);
    });

  return {
    store: view,
    settled: async () => {
      await arrived();
      assert.deepEqual(unfit, []);
      await primary.flush();
      view.renewSnapshot();
    },
    cleanup: async () => {
      await view.close();
      await arrived();
      workerPort.close();
      await engine.stop();
      await primary.close();
      await rm(path, { recursive: true, force: true });
    },
  };
};

cacheStoreConformance("a worker's warm tier", openWorkerView, entrySizeBytes);
demotionTargetConformance("a worker's warm tier", openWorkerView);
