// The primary's side of sharing its warm tier with its data-plane workers: their changes are applied
// here, its one writer, and they are told they may read it once it has joined this process's cache
// and what joining deleted is on disk (docs/storage.md "Shared by data-plane workers"). Until every
// worker has heard it, what they store does not reach the tier.
import type { TieredCache } from '../../cache/tiered-cache.js';
import type { InvalidationEngine } from '../../invalidation/create-invalidator.js';
import type { Logger } from '../../observe/logger.js';
import type { WarmStore } from '../../store/warm/warm-store.js';
import type { DataPlaneWorkers } from './data-plane-workers.js';
import { SharedWarmWrites } from './shared-warm-writes.js';

/** Resolves true once every worker reads and writes the tier, false when they never will (the index failed). */
export function shareWarmWithWorkers(workers: DataPlaneWorkers, warm: WarmStore, cache: TieredCache, invalidator: InvalidationEngine, logger: Logger): Promise<boolean> {
  const writes = new SharedWarmWrites({ warm: () => (cache.warm === undefined ? undefined : warm), admissible: (entry) => invalidator.admissible(entry), logger });
  workers.shareWarm(warm, writes);
  return cache.warmJoined
    .then(async () => {
      if (cache.warm === undefined) return false;
      await warm.flush();
      await workers.warmJoined();
      return true;
    })
    .catch((error: unknown) => {
      logger.error({ err: error }, 'the warm tier joined but could not be flushed: the workers serve without it');
      return false;
    });
}
