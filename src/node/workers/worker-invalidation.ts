// Invalidations on a node whose data plane runs in several workers. Each worker holds its own hot
// tier and its own purge records and bans (what its lookups check), so an invalidation answered by
// the admin API, or received from a peer, must have been applied in every worker before the answer:
// the primary applies it to its own engine first (which validates it, refuses a bad ban before
// anything is sent, and keeps the list of recent invalidations and active bans the API shows), then
// calls every worker and waits for each (worker-calls.ts). A worker that fails or does not answer
// in time is killed: it may have missed the invalidation and must not serve again. A worker forked
// later starts with an empty hot tier and no warm tier (configuration refuses one with workers), so
// nothing it could serve predates an invalidation it did not see.
import type { Logger } from '../../observe/logger.js';
import type { BanSpec, BatchResult, InvalidationOrigin, InvalidationResult, Invalidator, UrlInvalidationResult } from '../../invalidation/invalidator.js';
import type { PrimaryChannel } from './primary-channel.js';
import type { WorkerCalls } from './worker-calls.js';

/** The call kind a worker answers by applying an invalidation, with the count it made. */
export const INVALIDATE_CALL = 'invalidate';

/**
 * An invalidation as the primary's engine received it; `origin` (a cluster invalidation's id and the
 * time it was made) goes with it, so that every worker dates it as the primary does.
 */
export type WorkerInvalidation = { origin?: InvalidationOrigin | undefined } & (
  | { type: 'purge'; url: string }
  | { type: 'purge_batch'; urls: string[] }
  | { type: 'ban'; spec: BanSpec }
  | { type: 'refresh'; url: string }
);

/** In a worker: applies the primary's invalidations to `local` and answers with their count. */
export function answerInvalidationCalls(channel: PrimaryChannel, local: Invalidator): void {
  channel.handle(INVALIDATE_CALL, async (payload) => {
    const invalidation = payload as WorkerInvalidation;
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

/** In the primary: the admin API's (and the cluster's) invalidator, applied here and in every worker. */
export class WorkersInvalidator implements Invalidator {
  constructor(
    private readonly local: Invalidator,
    /** The calls to every worker; undefined before the workers are forked (there is nothing to apply then). */
    private readonly calls: () => WorkerCalls | undefined,
    private readonly logger: Logger,
  ) {}

  async purge(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult> {
    return this.#withWorkers(await this.local.purge(url, origin), { type: 'purge', url, origin });
  }

  async purgeBatch(urls: readonly string[], origin?: InvalidationOrigin): Promise<BatchResult> {
    return this.#withWorkers(await this.local.purgeBatch(urls, origin), { type: 'purge_batch', urls: [...urls], origin });
  }

  async ban(spec: BanSpec, origin?: InvalidationOrigin): Promise<InvalidationResult> {
    return this.#withWorkers(await this.local.ban(spec, origin), { type: 'ban', spec, origin });
  }

  async refresh(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult> {
    return this.#withWorkers(await this.local.refresh(url, origin), { type: 'refresh', url, origin });
  }

  isInvalidated: Invalidator['isInvalidated'] = (entry) => this.local.isInvalidated(entry);
  activeBans: Invalidator['activeBans'] = () => this.local.activeBans();
  matchingBans: Invalidator['matchingBans'] = (entry) => this.local.matchingBans(entry);
  recent: Invalidator['recent'] = () => this.local.recent();
  counts: Invalidator['counts'] = () => this.local.counts();

  /** The primary's result with `count` raised by what every worker counted. */
  async #withWorkers<R extends InvalidationResult>(result: R, invalidation: WorkerInvalidation): Promise<R> {
    const calls = this.calls();
    if (calls === undefined) return result;
    const outcome = await calls.call<number>(INVALIDATE_CALL, invalidation, { onFailure: 'kill' });
    for (const failure of outcome.failed) {
      this.logger.error({ worker_id: failure.workerId, reason: failure.reason, type: invalidation.type }, 'a data-plane worker did not apply an invalidation: killed, it is forked again');
    }
    return { ...result, count: outcome.answers.reduce((sum, count) => sum + count, result.count) };
  }
}
