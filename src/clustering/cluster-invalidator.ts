// The admin API's invalidations, made cluster-wide: each operation is applied here first (so the
// answer counts this node's entries and a bad ban is refused before anything is sent), then handed to
// delivery, which takes it to the other nodes as the cluster mode says. Invalidations that arrive from
// other nodes are applied to the local engine only, never sent on again.
import type { BanSpec, BatchResult, InvalidationOrigin, Invalidator, InvalidationResult, UrlInvalidationResult } from '../invalidation/invalidator.js';
import type { ClusterMode, InvalidationDelivery, PublishReport } from './invalidation-delivery.js';
import type { InvalidationMessage } from './invalidation-message.js';

/**
 * How far past the time it was made an invalidation from another node reaches, at most: clocks of two
 * nodes differ, and one that is behind would otherwise leave what this node fetched just before the
 * invalidation really happened. Bounded so a late arrival (a restart, a catch-up) is applied as of
 * (about) when it was made, never as new. NTP keeps LAN clocks within milliseconds; 5 s is a margin.
 */
export const ORIGIN_CLOCK_SKEW_MS = 5_000;

export interface ClusterInvalidatorOptions {
  local: Invalidator;
  delivery: InvalidationDelivery;
  mode: ClusterMode;
  /** Fresh cluster-wide ids. */
  newId: () => string;
  /** The engine's clock, ms since the epoch: the time an operation made here takes effect from. */
  now: () => number;
  /**
   * Told when sending an invalidation that was applied here failed (a full disk for the log, a bug):
   * the operation still succeeded here, and catch-up takes it to the others once the log has it.
   */
  onPublishError?: (error: unknown) => void;
  /**
   * Strong mode: members of the view the fan-out did not reach. Resolves once none of them can still
   * hold a lease (cluster/lease.ts), so that when the answer comes no member serves what it covers.
   */
  outlastLeases?: (missed: readonly string[], message: InvalidationMessage) => Promise<void>;
}

export class ClusterInvalidator implements Invalidator {
  private readonly local: Invalidator;

  constructor(private readonly options: ClusterInvalidatorOptions) {
    this.local = options.local;
  }

  private made(): InvalidationOrigin {
    return { id: this.options.newId(), atMs: this.options.now() };
  }

  /**
   * Sends what was applied here; never fails the operation, which has happened: the answer says what
   * the fan-out did (strong mode) instead.
   */
  private async publish<R extends InvalidationResult>(result: R, message: InvalidationMessage): Promise<R> {
    let report: PublishReport;
    try {
      report = await this.options.delivery.publish(message);
    } catch (error) {
      this.options.onPublishError?.(error);
      return this.options.mode === 'strong' ? { ...result, peers: { confirmed: 0, missed: 0, missedNames: [] } } : result;
    }
    if (this.options.mode !== 'strong') return result;
    if (report.allMissed.length > 0) await this.options.outlastLeases?.(report.allMissed, message);
    return { ...result, peers: { confirmed: report.confirmed, missed: report.missed, missedNames: report.missedNames } };
  }

  async purge(url: string): Promise<UrlInvalidationResult> {
    const origin = this.made();
    const result = await this.local.purge(url, origin);
    return this.publish(result, { id: origin.id, at: origin.atMs, type: 'purge', url });
  }

  async purgeBatch(urls: readonly string[]): Promise<BatchResult> {
    const origin = this.made();
    const result = await this.local.purgeBatch(urls, origin);
    return this.publish(result, { id: origin.id, at: origin.atMs, type: 'purge_batch', urls: [...urls] });
  }

  async ban(spec: BanSpec): Promise<InvalidationResult> {
    const origin = this.made();
    const result = await this.local.ban(spec, origin);
    return this.publish(result, { id: origin.id, at: origin.atMs, type: 'ban', ...definedFields(spec) });
  }

  async refresh(url: string): Promise<UrlInvalidationResult> {
    const origin = this.made();
    const result = await this.local.refresh(url, origin);
    return this.publish(result, { id: origin.id, at: origin.atMs, type: 'refresh', url });
  }

  isInvalidated: Invalidator['isInvalidated'] = (entry) => this.local.isInvalidated(entry);
  activeBans: Invalidator['activeBans'] = () => this.local.activeBans();
  matchingBans: Invalidator['matchingBans'] = (entry) => this.local.matchingBans(entry);
  recent: Invalidator['recent'] = () => this.local.recent();
  counts: Invalidator['counts'] = () => this.local.counts();
}

function definedFields(spec: BanSpec): BanSpec {
  const fields: BanSpec = {};
  if (spec.host_regex) fields.host_regex = spec.host_regex;
  if (spec.path_regex) fields.path_regex = spec.path_regex;
  if (spec.surrogate_key) fields.surrogate_key = spec.surrogate_key;
  return fields;
}

/**
 * Applies an invalidation another node made, as of when it was made (plus the clock-skew margin, and
 * never later than now): what this node fetched since then stays. It was validated where it began.
 */
export async function applyRemoteInvalidation(local: Invalidator, message: InvalidationMessage, nowMs: number): Promise<void> {
  const origin: InvalidationOrigin = { id: message.id, atMs: Math.min(message.at + ORIGIN_CLOCK_SKEW_MS, nowMs) };
  switch (message.type) {
    case 'purge':
      await local.purge(message.url, origin);
      return;
    case 'purge_batch':
      await local.purgeBatch(message.urls, origin);
      return;
    case 'ban':
      await local.ban(message, origin);
      return;
    case 'refresh':
      await local.refresh(message.url, origin);
      return;
  }
}
