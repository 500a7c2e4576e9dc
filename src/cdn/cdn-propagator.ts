// CDN propagation (spec §6.2, §6.3): built from the `cdn` block, so a configuration reload can stop
// one and start another. It maps each invalidation the admin API applied to CDN purges, queues them
// (on disk beside the invalidation journal when there is a warm tier), and either answers at once
// (`cdn.async: true`) or waits for the CDN to confirm them. What happened is in `status()`, the
// metrics and the log; no message it logs or returns holds the token.
import { performance } from 'node:perf_hooks';
import type { Config } from '../config/index.js';
import type { CdnStatusResponse } from '../api/responses.js';
import type { Logger } from '../observe/logger.js';
import { realSetTimer } from '../runtime/timers.js';
import type { CdnMetrics } from './cdn-metrics.js';
import { CloudflareClient } from './cloudflare-client.js';
import { CdnNotConfirmedError } from './errors.js';
import { PendingPurges, type PendingPurge } from './pending-purges.js';
import { mapInvalidation, type CdnInvalidation } from './purge-mapping.js';
import { PurgeQueue, type CallReport } from './purge-queue.js';
import { sendWithRetries, type RetryTiming } from './send-with-retries.js';

export type CdnConfig = NonNullable<Config['cdn']>;

export interface CdnPropagatorOptions {
  config: CdnConfig;
  /** The resolved token (cdn-token.ts). */
  token: string;
  logger: Logger;
  metrics: CdnMetrics;
  /** Directory of the pending-purge journal; undefined keeps pending purges in memory only. */
  pendingDir: string | undefined;
  /** ms since the epoch. */
  now: () => number;
  /** Tests only: the timers (batch window, retry waits, cool-downs) and the jitter's randomness. */
  timing?: Partial<RetryTiming>;
}

export class CdnPropagator {
  readonly #config: CdnConfig;
  readonly #logger: Logger;
  readonly #metrics: CdnMetrics;
  readonly #now: () => number;
  readonly #client: CloudflareClient;
  readonly #store: PendingPurges;
  readonly #queue: PurgeQueue;
  #lastError: { message: string; atMs: number } | undefined;
  #lastSuccessMs: number | undefined;

  private constructor(options: CdnPropagatorOptions, store: PendingPurges, initial: readonly PendingPurge[]) {
    this.#config = options.config;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#now = options.now;
    this.#store = store;
    const timing: RetryTiming = { setTimer: options.timing?.setTimer ?? realSetTimer, random: options.timing?.random ?? Math.random };
    const client = new CloudflareClient({
      baseUrl: options.config.api_base_url,
      zoneId: options.config.zone_id,
      token: options.token,
      timeoutMs: options.config.timeout,
      now: options.now,
    });
    this.#client = client;
    this.#queue = new PurgeQueue({
      store,
      initial,
      send: (kind, values, signal) => sendWithRetries(() => client.purge(kind, values, signal), timing, signal),
      onCall: (report) => this.#record(report),
      onError: (error) => this.#logger.error({ err: error }, 'the pending-purge journal could not be written: CDN propagation stopped until restart'),
      setTimer: timing.setTimer,
      now: options.now,
      monotonicNow: () => performance.now(),
    });
    options.metrics.bindPending(() => this.#queue.size);
  }

  /** Opens the pending-purge journal and starts sending what it held. */
  static async start(options: CdnPropagatorOptions): Promise<CdnPropagator> {
    const { store, pending } = await PendingPurges.open(options.pendingDir);
    const propagator = new CdnPropagator(options, store, pending);
    const { logger, config } = options;
    logger.info({ zone_id: config.zone_id, endpoint: propagator.#client.endpoint, async: config.async, pending: pending.length }, 'CDN propagation on');
    if (!store.durable) {
      logger.warn('no warm tier: CDN purges not yet confirmed are kept in memory only and lost if the node stops first');
    }
    return propagator;
  }

  /**
   * Forwards an invalidation the admin API applied. Resolves once its purges are queued (async mode)
   * or confirmed (sync mode); in sync mode throws CdnNotConfirmedError when the CDN did not confirm.
   */
  async forward(invalidation: CdnInvalidation): Promise<void> {
    const operation = invalidation.type;
    if (!this.#config.propagate[operation]) return;
    const mapping = mapInvalidation(invalidation);
    if ('skipped' in mapping) {
      this.#metrics.skipped(mapping.skipped);
      this.#logger.info({ operation, reason: mapping.skipped }, 'invalidation not forwarded to the CDN');
      return;
    }
    if (mapping.targets.length === 0) return;
    const queued = await this.#queue.add(mapping.targets, !this.#config.async);
    if (queued === undefined) {
      this.#metrics.skipped('queue_full');
      this.#logger.error({ operation, pending: this.#queue.size }, 'CDN queue full: invalidation not forwarded to the CDN');
      if (!this.#config.async) throw new CdnNotConfirmedError(`the CDN queue is full (${this.#queue.size} purges pending)`);
      return;
    }
    if (queued.confirmed === undefined) return;
    try {
      await queued.confirmed;
    } catch (error) {
      throw new CdnNotConfirmedError((error as Error).message);
    }
  }

  status(): CdnStatusResponse {
    const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
    const { propagate } = this.#config;
    return {
      enabled: propagate.purge || propagate.ban || propagate.refresh,
      zone_id: this.#config.zone_id,
      async: this.#config.async,
      last_error: this.#lastError?.message ?? null,
      last_error_at: iso(this.#lastError?.atMs),
      last_success_at: iso(this.#lastSuccessMs),
      pending: this.#queue.size,
    };
  }

  /** Stops sending; a call under way is abandoned and its purges stay pending. */
  async stop(): Promise<void> {
    await this.#queue.stop();
    if (!this.#store.durable && this.#queue.size > 0) {
      this.#logger.error({ pending: this.#queue.size }, 'stopping with CDN purges not confirmed; without a warm tier they are lost');
    }
    await this.#client.close();
    await this.#store.close();
  }

  #record(report: CallReport): void {
    const { result, fate } = report;
    this.#metrics.call(report.operations, result.outcome === 'ok' ? 'ok' : 'error', report.durationMs / 1000);
    const fields = { kind: report.kind, count: report.values.length, operations: report.operations, retries: report.retries };
    if (result.outcome === 'ok') {
      this.#lastSuccessMs = this.#now();
      this.#logger.debug(fields, 'CDN purge confirmed');
      return;
    }
    this.#lastError = { message: result.message, atMs: this.#now() };
    const details = { ...fields, values: report.values, error: result.message };
    // Spec §6.3: a 4xx other than 429 is logged at warn, whether it refused the purge or the token.
    if (fate === 'dropped') this.#logger.warn(details, 'CDN refused a purge: not retried');
    else if (fate === 'halted') this.#logger.warn(details, 'CDN refused the token or zone: purges stay pending until the node restarts');
    else this.#logger.error({ ...details, retry_in_ms: report.coolDownMs }, 'CDN purge failed after retries: pending, tried again later');
  }
}
