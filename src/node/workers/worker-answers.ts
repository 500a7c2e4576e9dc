// A data-plane worker's answers to its primary: what the primary asks every worker once the worker's
// node is built (calls sent before are held by the channel until then, see primary-channel.ts).
import type { SvcNode } from '../svc-node.js';
import { createCacheCheck } from '../cache-check.js';
import type { PrimaryChannel } from './primary-channel.js';
import { answerInvalidationCalls } from './worker-invalidation.js';
import { answerMetricsCalls } from './worker-metrics.js';
import type { WorkerWarmTier } from './worker-warm-tier.js';

/** The worker's data-plane URL, with the port bound (the primary learns a port 0 from it). */
export const DESCRIBE_CALL = 'describe';
/** The worker's hot tier: `{ entries, bytes }`. */
export const HOT_TIER_CALL = 'hot-tier';
/** Stop taking new work; answered once in-flight requests are done or the drain timed out. */
export const DRAIN_CALL = 'drain';
/** Read the configuration file again and apply it, as the primary just did. */
export const RELOAD_CALL = 'reload';
/** What this worker holds for a URL (`/v1/debug/cachecheck`). */
export const CACHE_CHECK_CALL = 'cache-check';

export interface HotTierFigures {
  entries: number;
  bytes: number;
}

/** `warm`: the worker's view of the primary's warm tier, read afresh before each invalidation is applied. */
export function answerPrimaryCalls(channel: PrimaryChannel, node: SvcNode, warm: WorkerWarmTier | undefined): void {
  answerMetricsCalls(channel, node.metrics.registry);
  answerInvalidationCalls(channel, node.invalidator, () => warm?.renewSnapshot());
  channel.handle(DESCRIBE_CALL, () => node.dataUrl);
  channel.handle(HOT_TIER_CALL, (): HotTierFigures => ({ entries: node.cache.hot.entryCount, bytes: node.cache.hot.byteCount }));
  channel.handle(DRAIN_CALL, () => node.drain());
  channel.handle(RELOAD_CALL, () => node.reload());
  // A worker has no cluster member: which node owns a key is the primary's to say (strong mode, which
  // several workers do not run yet).
  const cacheCheck = createCacheCheck({
    cache: node.cache,
    now: Date.now,
    isInvalidated: (entry) => node.invalidator.isInvalidated(entry),
    matchingBans: (entry) => node.invalidator.matchingBans(entry),
    ownerOf: () => null,
  });
  channel.handle(CACHE_CHECK_CALL, (url) => cacheCheck(url as string));
}
