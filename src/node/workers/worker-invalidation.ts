// Invalidations on a node whose data plane runs in several workers. Each worker holds its own hot
// tier and its own purge records and bans (what its lookups check), so an invalidation answered by
// the admin API, or received from a peer, must have been applied in every worker before the answer:
// the primary's engine applies it to its own tiers and journal first (it validates it, refuses a bad
// ban before anything is sent, and keeps the list of recent invalidations and active bans the API
// shows), then calls every worker through these replicas and waits for each (worker-calls.ts); what
// the workers count joins the engine's result and its recent list. A worker that fails or does not
// answer in time is killed: it may have missed the invalidation and must not serve again. A worker
// forked later starts with an empty hot tier; the warm tier it reads is the primary's, which applied
// every invalidation, so nothing it could serve predates an invalidation it did not see.
//
// The warm tier is shared (worker-warm-tier.ts): the primary applies an invalidation to it before
// calling the workers (a refresh's rewrite is on disk by then; a purge's or ban's records are hidden
// by each worker's own purge records and bans until the primary's deletes commit), and a store a
// worker sent before it applied the invalidation is checked by the primary when it arrives.
import type { Logger } from '../../observe/logger.js';
import type { InvalidationReplicas, Invalidator, ReplicatedInvalidation } from '../../invalidation/invalidator.js';
import type { PrimaryChannel } from './primary-channel.js';
import type { WorkerCalls } from './worker-calls.js';

/** The call kind a worker answers by applying an invalidation, with the count it made. */
export const INVALIDATE_CALL = 'invalidate';

/**
 * In a worker: applies the primary's invalidations to `local` and answers with their count.
 * `beforeEach` runs first: the shared warm tier's reads must see what the primary already changed.
 */
export function answerInvalidationCalls(channel: PrimaryChannel, local: Invalidator, beforeEach: () => void): void {
  channel.handle(INVALIDATE_CALL, async (payload) => {
    const invalidation = payload as ReplicatedInvalidation;
    beforeEach();
    switch (invalidation.type) {
      case 'purge':
        return (await local.purge(invalidation.url, invalidation.origin)).count;
      case 'purge_batch':
        return (await local.purgeBatch(invalidation.urls, invalidation.origin)).count;
      case 'ban':
        return (await local.ban(invalidation.spec, invalidation.origin)).count;
      case 'refresh':
        return (await local.refresh(invalidation.url, invalidation.origin)).count;
    }
  });
}

/** In the primary: the engine's replicas, every worker of the node. */
export class WorkerReplicas implements InvalidationReplicas {
  constructor(
    /** The calls to every worker; undefined before the workers are forked (there is nothing to apply then). */
    private readonly calls: () => WorkerCalls | undefined,
    private readonly logger: Logger,
  ) {}

  /** What every worker counted, added up. */
  async apply(invalidation: ReplicatedInvalidation): Promise<number> {
    const calls = this.calls();
    if (calls === undefined) return 0;
    const outcome = await calls.call<number>(INVALIDATE_CALL, invalidation, { onFailure: 'kill' });
    for (const failure of outcome.failed) {
      this.logger.error({ worker_id: failure.workerId, reason: failure.reason, type: invalidation.type }, 'a data-plane worker did not apply an invalidation: killed, it is forked again');
    }
    return outcome.answers.reduce((sum, count) => sum + count, 0);
  }
}
