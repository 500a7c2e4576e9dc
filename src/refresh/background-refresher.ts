// Background refresh (spec §2.3 `refresh_before_expiry`, `refresh_min_hits`; §6.5): entries served
// from cache on a refresh-enabled route are registered; when one that earned its hits reaches 90% of
// its freshness lifetime it is revalidated with the origin in the background, within a bound on
// concurrent refreshes (a semaphore) and on refreshes started per second (a token bucket), so a
// popular object is renewed before any client sees it stale. docs/background-refresh.md is the
// operator's view of every choice made here.
import type { Registry } from 'prom-client';
import type { CacheEntry } from '../cache/entry.js';
import type { TieredCache } from '../store/tiered-cache.js';
import { decideReuse, type ReuseEntry } from '../cache/policy/reuse.js';
import { NO_REQUEST_DIRECTIVES } from '../cache/policy/request-directives.js';
import type { CachingRoute } from '../fill/origin-opening.js';
import type { OriginRequest } from '../fill/origin-fetch.js';
import type { Logger } from '../observe/logger.js';
import type { FillLayer } from '../fill/fill-layer.js';
import { DueQueue } from './due-queue.js';
import { requireInRange } from './errors.js';
import { originRequestOf, refetchRequestOf, type RefetchRequest } from './refetch-request.js';
import { DEFAULT_REFRESH_AT_FRACTION, expiresAtMs, refreshDueAtMs } from './refresh-timing.js';
import { findStored, refreshEntry } from './refresh-entry.js';
import { RefreshMetrics, type SkipReason } from './refresh-metrics.js';
import { RefreshRegistry, recordId, type RegistryRecord } from './refresh-registry.js';
import { readRegistryFile, writeRegistryFile, type PersistedRecord } from './registry-file.js';
import { TokenBucket } from './token-bucket.js';
import { realSetTimer, type CancelTimer, type SetTimer } from '../runtime/timers.js';

/** A route with `refresh_before_expiry`: what the proxy knows of it, and its popularity gate. */
export interface RefreshRoute extends CachingRoute {
  /** `refresh_min_hits`: hits in an entry's current lifetime before it is refreshed. */
  minHits: number;
}

/** 10 000 records: the popular head of a catalogue, at a few hundred bytes each (a few MB). */
export const DEFAULT_MAX_RECORDS = 10_000;
/** 8 refreshes at once: a background load an origin never notices beside client traffic. */
export const DEFAULT_CONCURRENCY = 8;
/** 50 refreshes started per second, with bursts of as many: renews 3 000 objects a minute. */
export const DEFAULT_RATE_PER_SECOND = 50;
/**
 * 500 ms before a refresh skipped for a full semaphore or an empty bucket is tried again: the bucket
 * has gained 25 tokens by then, and it is small beside the 10% lead of any lifetime over 5 s.
 */
export const DEFAULT_RETRY_DELAY_MS = 500;
/** 60 s between registry writes: a crash forgets at most a minute of popularity. */
export const DEFAULT_PERSIST_INTERVAL_MS = 60_000;
/**
 * 1 s at most between looks at the queue: timers run on the monotonic clock and due times on the
 * wall clock, so a stepped wall clock delays a refresh by at most this much.
 */
export const MAX_TIMER_DELAY_MS = 1_000;

export interface BackgroundRefresherOptions {
  cache: TieredCache;
  routes: readonly RefreshRoute[];
  /** The node's metrics registry; the refresh metrics are registered on it. */
  registry: Registry;
  logger: Logger;
  /** The node's fill layer: refreshes are fills, coalesced and stored as the request path's are. */
  fills: FillLayer;
  /** The proxy's lazy ban check; entries it hides are never refreshed. */
  isInvalidated?: ((entry: CacheEntry) => boolean) | undefined;
  /** Directory the registry is persisted in (the warm tier's); not persisted without one. */
  persistDirectory?: string | undefined;
  /** Wall clock, ms since the epoch; Date.now by default. */
  now?: () => number;
  /** How the refresher waits; real timers by default. */
  setTimer?: SetTimer;
  maxRecords?: number;
  concurrency?: number;
  ratePerSecond?: number;
  /** Tokens the bucket holds; `ratePerSecond` by default (one second's worth). */
  burst?: number;
  /** Share of the freshness lifetime after which an entry is refreshed. */
  refreshAtFraction?: number;
  retryDelayMs?: number;
  persistIntervalMs?: number;
}

type ServedHook = (entry: CacheEntry, request: OriginRequest, route: CachingRoute) => void;

/** What the registry reads of an entry served: its identity and its lifetime. */
export type ServedEntry = Pick<CacheEntry, 'key' | 'variantKey'> & ReuseEntry;

export class BackgroundRefresher {
  readonly #cache: TieredCache;
  readonly #routes: Map<string, RefreshRoute>;
  readonly #logger: Logger;
  readonly #fills: FillLayer;
  readonly #isInvalidated: ((entry: CacheEntry) => boolean) | undefined;
  readonly #persistDirectory: string | undefined;
  readonly #now: () => number;
  readonly #setTimer: SetTimer;
  readonly #concurrency: number;
  readonly #refreshAtFraction: number;
  readonly #retryDelayMs: number;
  readonly #persistIntervalMs: number;
  readonly #maxRecords: number;

  readonly #registry: RefreshRegistry;
  readonly #queue = new DueQueue<RegistryRecord>();
  readonly #bucket: TokenBucket;
  readonly #metrics: RefreshMetrics;
  readonly #scheduledPerRoute = new Map<string, number>();
  readonly #inFlightPerRoute = new Map<string, number>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #inFlightCount = 0;
  #cancelDueTimer: CancelTimer | undefined;
  #dueTimerAtMs: number | undefined;
  #cancelPersistTimer: CancelTimer | undefined;
  #persisting: Promise<void> | undefined;
  #stopped = false;

  constructor(options: BackgroundRefresherOptions) {
    this.#cache = options.cache;
    this.#routes = new Map(options.routes.map((route) => [route.label, route]));
    this.#logger = options.logger;
    this.#fills = options.fills;
    this.#isInvalidated = options.isInvalidated;
    this.#persistDirectory = options.persistDirectory;
    this.#now = options.now ?? Date.now;
    this.#setTimer = options.setTimer ?? realSetTimer;
    this.#maxRecords = options.maxRecords ?? DEFAULT_MAX_RECORDS;
    this.#concurrency = requireInRange('concurrency', options.concurrency ?? DEFAULT_CONCURRENCY, 1, 10_000);
    this.#refreshAtFraction = requireInRange('refreshAtFraction', options.refreshAtFraction ?? DEFAULT_REFRESH_AT_FRACTION, 0, 1);
    this.#retryDelayMs = requireInRange('retryDelayMs', options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS, 1, 3_600_000);
    this.#persistIntervalMs = requireInRange('persistIntervalMs', options.persistIntervalMs ?? DEFAULT_PERSIST_INTERVAL_MS, 1, 86_400_000);
    this.#registry = new RefreshRegistry(this.#maxRecords);
    const ratePerSecond = options.ratePerSecond ?? DEFAULT_RATE_PER_SECOND;
    this.#bucket = new TokenBucket(ratePerSecond, options.burst ?? Math.max(1, Math.floor(ratePerSecond)), this.#now);
    this.#metrics = new RefreshMetrics(options.registry, [...this.#routes.keys()], {
      inFlight: (route) => this.#inFlightPerRoute.get(route) ?? 0,
      scheduled: (route) => this.#scheduledPerRoute.get(route) ?? 0,
      registrySize: (route) => this.#registry.sizeOf(route),
    });
  }

  /**
   * A configuration reload: the same routes (by label) with their new pools and cache options (a new
   * `max_object_bytes` reaches refreshes through the fill layer). Refreshes already running finish with
   * what they started with.
   */
  reconfigure(changes: { routes?: readonly RefreshRoute[] }): void {
    for (const route of changes.routes ?? []) {
      if (!this.#routes.has(route.label)) throw new Error(`BackgroundRefresher.reconfigure: route ${route.label} was not set up at start`);
      this.#routes.set(route.label, route);
    }
  }

  /** Restores the persisted registry (when there is one) and starts the persist cycle. */
  async start(): Promise<void> {
    if (this.#persistDirectory === undefined) return;
    const read = await readRegistryFile(this.#persistDirectory);
    if (read.status === 'unreadable') this.#logger.warn({ reason: read.reason }, 'refresh registry file ignored');
    if (read.status === 'read') {
      const restored = read.records.filter((persisted) => this.#restore(persisted)).length;
      this.#logger.info({ restored, persisted: read.records.length }, 'refresh registry restored');
      this.#arm();
    }
    this.#armPersist();
  }

  /**
   * The proxy's hook (CacheFlowDeps.onServedFromCache): a request found `entry` stored. Counts the hit
   * and, for an entry in a new lifetime, schedules its refresh. Cheap: one map read and a few writes.
   */
  readonly onServedFromCache: ServedHook = (entry, request, route) => {
    this.#served(entry, () => refetchRequestOf(request, entry.varyNames), route.label, 1);
  };

  /** Hits another thread of the node served (a data-plane worker's report, batched): counted as if served here. */
  noteServed(hit: { route: string; entry: ServedEntry; request: RefetchRequest; count: number }): void {
    this.#served(hit.entry, () => hit.request, hit.route, hit.count);
  }

  #served(entry: ServedEntry, refetch: () => RefetchRequest, routeLabel: string, hits: number): void {
    const settings = this.#routes.get(routeLabel);
    if (settings === undefined || this.#stopped) return;
    const queued = this.#queue.size;
    const id = recordId(entry.key, entry.variantKey);
    let record = this.#registry.get(id);
    if (record === undefined) {
      record = {
        id,
        key: entry.key,
        variantKey: entry.variantKey,
        route: settings.label,
        request: refetch(),
        hits: 0,
        entryStampMs: Number.NaN,
        expiresAtMs: 0,
        dueAtMs: undefined,
        waitingForHits: false,
      };
      this.#registry.add(record);
    } else {
      this.#registry.touch(record);
    }
    if (record.entryStampMs !== entry.responseTimeMs) {
      record.request = refetch();
      this.#describe(record, entry, 0);
    }
    record.hits += hits;
    if (record.waitingForHits && record.hits >= settings.minHits) {
      // Popular late in its lifetime: refreshed now rather than left to go stale (unless it already is).
      record.waitingForHits = false;
      const now = this.#now();
      if (this.#isFresh(entry, now)) this.#schedule(record, now);
    }
    if (this.#queue.size !== queued) this.#arm();
  }

  /** Starts every refresh that is due; the timer calls it, and a test may call it after moving the clock. */
  runDue(): void {
    if (this.#stopped) return;
    const now = this.#now();
    for (let next = this.#queue.peek(); next !== undefined && next.atMs <= now; next = this.#queue.peek()) {
      this.#queue.pop();
      this.#due(next.item, next.atMs, now);
    }
    this.#compact();
    this.#arm();
  }

  /** Resolves once the refreshes in flight now have ended. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** Writes the registry to the persist directory; one svc_refresh_total{result="persist_cycle"} per route. */
  persist(): Promise<void> {
    this.#persisting ??= this.#writeRegistry().finally(() => {
      this.#persisting = undefined;
    });
    return this.#persisting;
  }

  /** Cancels the timers, aborts the refreshes in flight and writes the registry a last time. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#cancelDueTimer?.();
    this.#cancelPersistTimer?.();
    this.#cancelDueTimer = this.#cancelPersistTimer = undefined;
    this.#abort.abort();
    await this.settled();
    await this.#persisting;
    if (this.#persistDirectory !== undefined) await this.persist();
  }

  /** Points the record at `entry`'s lifetime, with `hits` so far, and schedules its refresh if fresh. */
  #describe(record: RegistryRecord, entry: ServedEntry, hits: number): void {
    record.entryStampMs = entry.responseTimeMs;
    record.expiresAtMs = expiresAtMs(entry);
    record.hits = hits;
    record.waitingForHits = false;
    const now = this.#now();
    if (this.#isFresh(entry, now)) this.#schedule(record, Math.max(now, refreshDueAtMs(entry, this.#refreshAtFraction)));
    else this.#setDue(record, undefined);
  }

  /** A refresh came due (or its slot is outdated, when `atMs` is not the record's due time). */
  #due(record: RegistryRecord, atMs: number, now: number): void {
    if (record.dueAtMs !== atMs) return;
    this.#setDue(record, undefined);
    const route = this.#routes.get(record.route)!;
    if (this.#registry.get(record.id) !== record) return this.#skip(record, 'not_registered');
    if (record.hits < route.minHits) {
      record.waitingForHits = true;
      return this.#skip(record, 'below_min_hits');
    }
    const entry = findStored({ cache: this.#cache, isInvalidated: this.#isInvalidated }, record.key, record.variantKey);
    if (entry === undefined) return this.#skip(record, 'not_found');
    if (entry.responseTimeMs !== record.entryStampMs) {
      // Stored again meanwhile (a client's revalidation or a refill): a new lifetime with its own hits.
      this.#describe(record, entry, 0);
      return;
    }
    if (entry.status >= 400) return this.#skip(record, 'negative');
    if (!this.#isFresh(entry, now)) return this.#skip(record, 'stale');
    const request = originRequestOf(record.request, record.key);
    if (request === undefined) return this.#skip(record, 'bad_url');
    if (this.#inFlightCount >= this.#concurrency) return this.#retryLater(record, now, 'semaphore_full');
    if (!this.#bucket.tryTake()) return this.#retryLater(record, now, 'rate_limited');
    this.#startRefresh(record, entry, request, route);
  }

  #startRefresh(record: RegistryRecord, entry: CacheEntry, request: OriginRequest, route: RefreshRoute): void {
    this.#inFlightCount += 1;
    this.#addTo(this.#inFlightPerRoute, route.label, 1);
    const deps = { cache: this.#cache, fills: this.#fills, isInvalidated: this.#isInvalidated };
    const run = refreshEntry(deps, entry, request, route, this.#abort.signal)
      .then((outcome) => {
        this.#metrics.result(route.label, outcome.result);
        if (outcome.result === 'error') {
          // Not retried in this lifetime: the entry expires and the request path revalidates it.
          this.#metrics.error(route.label, outcome.errorType);
        } else if (this.#registry.get(record.id) === record && !this.#stopped) {
          this.#describe(record, outcome.entry, 0);
        }
      })
      .catch((error: unknown) => {
        this.#metrics.result(route.label, 'error');
        this.#metrics.error(route.label, 'internal_error');
        this.#logger.warn({ err: error, key: record.key }, 'background refresh failed');
      })
      .finally(() => {
        this.#inFlightCount -= 1;
        this.#addTo(this.#inFlightPerRoute, route.label, -1);
        this.#inFlight.delete(run);
        this.#arm();
      });
    this.#inFlight.add(run);
  }

  /** Counts the skip and tries again after the retry delay, unless the entry has expired by then. */
  #retryLater(record: RegistryRecord, now: number, reason: 'semaphore_full' | 'rate_limited'): void {
    this.#skip(record, reason);
    const retryAtMs = now + this.#retryDelayMs;
    if (retryAtMs < record.expiresAtMs) this.#schedule(record, retryAtMs);
  }

  #skip(record: RegistryRecord, reason: SkipReason): void {
    this.#metrics.skip(record.route, reason);
  }

  #isFresh(entry: ReuseEntry, now: number): boolean {
    return decideReuse(NO_REQUEST_DIRECTIVES, entry, now).action === 'fresh';
  }

  #schedule(record: RegistryRecord, atMs: number): void {
    this.#setDue(record, atMs);
    this.#queue.push(record, atMs);
  }

  /** The one place a record's pending refresh changes, so the scheduled gauge stays exact. */
  #setDue(record: RegistryRecord, atMs: number | undefined): void {
    if ((record.dueAtMs === undefined) !== (atMs === undefined)) this.#addTo(this.#scheduledPerRoute, record.route, atMs === undefined ? -1 : 1);
    record.dueAtMs = atMs;
  }

  /**
   * Outdated slots (rescheduled records) and slots of records evicted from the registry stay in the
   * queue until they come due; when they outnumber the registry, the queue is rebuilt without them.
   * An evicted record's pending refresh is skipped then as not_registered, as it would be when due.
   */
  #compact(): void {
    if (this.#queue.size <= 2 * this.#maxRecords + 64) return;
    this.#queue.retain((record, atMs) => {
      if (record.dueAtMs !== atMs) return false;
      if (this.#registry.get(record.id) === record) return true;
      this.#setDue(record, undefined);
      this.#skip(record, 'not_registered');
      return false;
    });
  }

  /** Arms the due timer for the earliest pending refresh, at most MAX_TIMER_DELAY_MS ahead. */
  #arm(): void {
    if (this.#stopped) return;
    const next = this.#queue.peek();
    if (next === undefined) return;
    const now = this.#now();
    const fireAtMs = Math.min(next.atMs, now + MAX_TIMER_DELAY_MS);
    if (this.#dueTimerAtMs !== undefined && this.#dueTimerAtMs <= fireAtMs) return;
    this.#cancelDueTimer?.();
    this.#dueTimerAtMs = fireAtMs;
    this.#cancelDueTimer = this.#setTimer(() => {
      this.#cancelDueTimer = this.#dueTimerAtMs = undefined;
      this.runDue();
    }, Math.max(0, fireAtMs - now));
  }

  #armPersist(): void {
    if (this.#stopped) return;
    this.#cancelPersistTimer = this.#setTimer(() => {
      this.#cancelPersistTimer = undefined;
      void this.persist().finally(() => this.#armPersist());
    }, this.#persistIntervalMs);
  }

  async #writeRegistry(): Promise<void> {
    const directory = this.#persistDirectory;
    if (directory === undefined) return;
    const records: PersistedRecord[] = [];
    for (const record of this.#registry.records()) {
      const { key, variantKey, route, hits, entryStampMs } = record;
      records.push({ key, variantKey, route, hits, entryStampMs, ...record.request });
    }
    try {
      await writeRegistryFile(directory, records);
      for (const route of this.#routes.keys()) this.#metrics.result(route, 'persist_cycle');
    } catch (error) {
      for (const route of this.#routes.keys()) this.#metrics.error(route, 'persist_failed');
      this.#logger.warn({ err: error, directory }, 'refresh registry not persisted');
    }
  }

  /** Re-registers a persisted record whose entry is still stored; false when it is not. */
  #restore(persisted: PersistedRecord): boolean {
    if (!this.#routes.has(persisted.route)) return false;
    const entry = findStored({ cache: this.#cache, isInvalidated: this.#isInvalidated }, persisted.key, persisted.variantKey);
    if (entry === undefined) return false;
    const record: RegistryRecord = {
      id: recordId(persisted.key, persisted.variantKey),
      key: persisted.key,
      variantKey: persisted.variantKey,
      route: persisted.route,
      request: { path: persisted.path, host: persisted.host, varyFields: persisted.varyFields },
      hits: 0,
      entryStampMs: Number.NaN,
      expiresAtMs: 0,
      dueAtMs: undefined,
      waitingForHits: false,
    };
    this.#registry.add(record);
    // Hits belong to a lifetime: they carry over only when the stored entry is the one they were for.
    this.#describe(record, entry, entry.responseTimeMs === persisted.entryStampMs ? persisted.hits : 0);
    return true;
  }

  #addTo(counts: Map<string, number>, route: string, delta: number): void {
    counts.set(route, (counts.get(route) ?? 0) + delta);
  }
}
