// The invalidation engine: the four operations of spec §1 over a TieredCache, the lazy check the
// proxy runs on every lookup, 24-hour ban retention, and a journal that keeps bans across restarts.
import { randomUUID } from 'node:crypto';
import { entryFields, type CacheEntry } from '../cache/entry.js';
import type { TieredCache } from '../store/tiered-cache.js';
import type { Logger } from '../observe/logger.js';
import type { StoredSummary } from '../store/cache-store.js';
import { assertBanFieldLengths, compileBan, describeBan, type Ban } from './ban.js';
import { BanList } from './ban-list.js';
import { BanLurker } from './ban-lurker.js';
import { BanLimitError, CorruptJournalError, InvalidBanError, InvalidUrlError, InvalidatorStateError } from './errors.js';
import { InvalidationJournal, type JournalRecord } from './invalidation-journal.js';
import { InvalidationSequence, type StoreGate } from './invalidation-sequence.js';
import type {
  ActiveBan,
  BanSpec,
  BatchResult,
  InvalidationOrigin,
  InvalidationReplicas,
  InvalidationResult,
  InvalidationType,
  Invalidator,
  RecentInvalidation,
  ReplicatedInvalidation,
  UrlInvalidationResult,
} from './invalidator.js';
import { PurgeRecords } from './purge-records.js';
import { RecentInvalidations } from './recent-invalidations.js';
import { TimeSlicer } from './time-slicer.js';
import { keysOfUrl } from './url-key.js';

/** Active bans are kept this long, then pruned (spec §1.1, §8). */
export const BAN_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * How long a purge record keeps hiding entries fetched before the purge (the lazy check). Fills no
 * longer rely on it: the store gate refuses what a purge covers however long the fill ran
 * (invalidation-sequence.ts), so the window only bounds the records' memory; 5 min keeps a safety net
 * well past any origin fetch (`response_timeout` defaults to 30 s).
 */
export const PURGE_WINDOW_MS = 5 * 60 * 1000;
/** Purge records kept at most; past it the oldest expire early. Bounds memory under a purge storm. */
export const MAX_PURGE_RECORDS = 100_000;
/**
 * How often expired bans and purge records are pruned. A prune walks both tiers once for all the bans
 * it drops, so prunes are batched: a ban lives between 24 h and 24 h plus this interval.
 */
export const PRUNE_INTERVAL_MS = 10 * 60 * 1000;
/** Entries of the recent-invalidations list (what the dashboard shows). */
export const RECENT_LIMIT = 100;
/**
 * Active bans at most (`max_active_bans`); a new ban beyond it is refused (BanLimitError) until the
 * oldest expire. 10,000 bans in 24 hours is one every 9 seconds, day and night, and costs the lazy
 * check and memory little (docs/invalidation.md has the figures); without a bound, bans are a way to
 * exhaust a node's memory.
 */
export const DEFAULT_MAX_ACTIVE_BANS = 10_000;

export interface InvalidatorOptions {
  cache: TieredCache;
  logger: Logger;
  /** Directory of the invalidation journal; undefined keeps bans in memory only (lost at restart). */
  dataDir?: string | undefined;
  /**
   * Directory of a journal another process keeps (a data-plane worker's primary): its bans and purge
   * records are read at start, so that what it hides in the warm tier they share is hidden here too.
   * Never written; in place of dataDir.
   */
  replayFrom?: string | undefined;
  /** ms since the epoch; the clock entries' requestTimeMs come from. Date.now unless a test sets it. */
  now?: () => number;
  recentLimit?: number;
  banRetentionMs?: number;
  purgeWindowMs?: number;
  maxPurgeRecords?: number;
  pruneIntervalMs?: number;
  maxActiveBans?: number;
  /** Where every operation is applied too before it answers (a node's data-plane workers). */
  replicas?: InvalidationReplicas | undefined;
  /**
   * Whether a ban evicts what it matches from the hot tier at once (spec §1.1), true by default. A
   * data-plane worker thread's engine leaves it to the main thread's: the tier is one for the node,
   * walked once; the worker's lookups hide what the ban matches all the same.
   */
  evictsEagerly?: boolean | undefined;
}

/** What one prune did. */
export interface PruneReport {
  bansPruned: number;
  purgeRecordsPruned: number;
  /** Entries still hidden by what was pruned, deleted from the tiers so they never reappear. */
  entriesDeleted: number;
}

export interface InvalidationEngine extends Invalidator, StoreGate {
  /** Replays the journal, starts observing the hot tier and the prune timer. Call before serving. */
  start(): Promise<void>;
  /** Stops the timer (abandoning a prune sweep under way) and closes the journal. */
  stop(): Promise<void>;
  /** Prunes expired bans and purge records now; the timer calls it. One prune runs at a time. */
  pruneNow(): Promise<PruneReport>;
  /**
   * Whether a new ban from an operator may enter: throws InvalidBanError (`empty_ban`,
   * `invalid_regex`, `field_too_long`) or BanLimitError (`ban_limit_reached`, counted) and changes
   * nothing else. The admin API asks before ban(); bans from other nodes and from the journal are
   * not asked, so that nodes never disagree on what is banned.
   */
  admitBan(spec: BanSpec): void;
  /**
   * Sets `maxActiveBans` (a configuration reload). Bans already in force stay, even above a lowered
   * bound: dropping one would serve again what it hides. New bans are refused until enough expire.
   */
  setMaxActiveBans(limit: number): void;
  /**
   * What the warm tier may keep of an entry stored elsewhere and written back to it (a data-plane
   * worker's, into the warm tier its primary owns): undefined when a purge or ban made at or after
   * the entry's fetch began hides it, a stale copy when such a refresh covers it. The write may have
   * crossed the invalidation on its way, after the tier was swept for it.
   */
  admissible(entry: CacheEntry): CacheEntry | undefined;
  /** Bans in force (svc_bans_active). */
  readonly activeBanCount: number;
  /** New bans refused because `maxActiveBans` were in force (svc_bans_rejected_total). */
  readonly bansRefused: number;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`invalidator ${name} must be a positive integer, got ${value}`);
  return value;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

class Engine implements InvalidationEngine {
  readonly #cache: TieredCache;
  readonly #logger: Logger;
  readonly #dataDir: string | undefined;
  readonly #replayFrom: string | undefined;
  readonly #now: () => number;
  readonly #banRetentionMs: number;
  readonly #purgeWindowMs: number;
  readonly #maxPurgeRecords: number;
  readonly #pruneIntervalMs: number;
  #maxActiveBans: number;
  readonly #replicas: InvalidationReplicas | undefined;
  readonly #evictsEagerly: boolean;

  readonly #bans = new BanList();
  /** Ids of the bans in #bans: a ban made elsewhere and delivered twice is kept once. */
  readonly #banIds = new Set<string>();
  readonly #purges = new PurgeRecords();
  /** When each recently refreshed key was refreshed, kept as purge records are: what admissible() reads. */
  readonly #refreshes = new PurgeRecords();
  readonly #lurker: BanLurker;
  #bansRefused = 0;
  readonly #sequence = new InvalidationSequence();
  readonly #recent: RecentInvalidations;
  readonly #counts: Record<InvalidationType, number> = { purge: 0, purge_batch: 0, ban: 0, refresh: 0 };

  #state: 'new' | 'running' | 'stopped' = 'new';
  #journal: InvalidationJournal | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pruning: Promise<PruneReport> | undefined;
  #lastPruneMs: number;
  /** The latest time handed out: operation times never go backwards, so bans stay in creation order. */
  #lastStampMs = -Infinity;

  constructor(options: InvalidatorOptions) {
    this.#cache = options.cache;
    this.#logger = options.logger;
    this.#dataDir = options.dataDir;
    this.#replayFrom = options.replayFrom;
    this.#now = options.now ?? Date.now;
    this.#banRetentionMs = positiveInteger('banRetentionMs', options.banRetentionMs ?? BAN_RETENTION_MS);
    this.#purgeWindowMs = positiveInteger('purgeWindowMs', options.purgeWindowMs ?? PURGE_WINDOW_MS);
    this.#maxPurgeRecords = positiveInteger('maxPurgeRecords', options.maxPurgeRecords ?? MAX_PURGE_RECORDS);
    this.#pruneIntervalMs = positiveInteger('pruneIntervalMs', options.pruneIntervalMs ?? PRUNE_INTERVAL_MS);
    this.#maxActiveBans = positiveInteger('maxActiveBans', options.maxActiveBans ?? DEFAULT_MAX_ACTIVE_BANS);
    this.#replicas = options.replicas;
    this.#evictsEagerly = options.evictsEagerly ?? true;
    this.#lurker = new BanLurker({
      cache: this.#cache,
      onError: (error) => this.#logger.error({ err: error }, 'the eager eviction of a ban failed; the lazy check still hides its matches'),
    });
    this.#recent = new RecentInvalidations(positiveInteger('recentLimit', options.recentLimit ?? RECENT_LIMIT));
    this.#lastPruneMs = this.#now();
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') throw new InvalidatorStateError(`start() called on a ${this.#state} invalidator`);
    if (this.#dataDir !== undefined) {
      const { journal, records } = await InvalidationJournal.open(this.#dataDir);
      try {
        this.#replay(records, journal.path);
      } catch (error) {
        await journal.close();
        throw error;
      }
      this.#journal = journal;
    } else if (this.#replayFrom !== undefined) {
      this.#replay(await InvalidationJournal.read(this.#replayFrom), this.#replayFrom);
    }
    this.#timer = setInterval(() => this.#pruneInBackground(), this.#pruneIntervalMs);
    this.#timer.unref();
    this.#state = 'running';
    // What expired while the node was down is pruned now, without holding up the start.
    this.#pruneInBackground();
  }

  async stop(): Promise<void> {
    if (this.#state !== 'running') return;
    this.#state = 'stopped';
    clearInterval(this.#timer);
    await this.#lurker.stop();
    await this.#pruning?.catch(() => undefined);
    await this.#journal?.close();
  }

  async purge(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult> {
    this.#assertRunning();
    const keys = keysOfUrl(url);
    if (keys === undefined) throw new InvalidUrlError(`not an absolute http(s) URL with a host: ${url}`);
    const atMs = origin?.atMs ?? this.#stamp();
    let count = 0;
    for (const key of keys) count += this.#purgeKey(key, atMs);
    await this.#persist(keys.map((key) => ({ type: 'purge', key, at_ms: atMs })));
    count += await this.#replicated({ type: 'purge', url, origin });
    return { ...this.#done('purge', url, atMs, count), keys };
  }

  async purgeBatch(urls: readonly string[], origin?: InvalidationOrigin): Promise<BatchResult> {
    this.#assertRunning();
    const atMs = origin?.atMs ?? this.#stamp();
    const records: JournalRecord[] = [];
    let count = 0;
    let failed = 0;
    for (const url of urls) {
      const keys = keysOfUrl(url);
      if (keys === undefined) {
        failed += 1;
        continue;
      }
      for (const key of keys) {
        count += this.#purgeKey(key, atMs);
        records.push({ type: 'purge', key, at_ms: atMs });
      }
    }
    await this.#persist(records);
    count += await this.#replicated({ type: 'purge_batch', urls: [...urls], origin });
    return { ...this.#done('purge_batch', `${urls.length} URLs`, atMs, count), failed };
  }

  admitBan(spec: BanSpec): void {
    assertBanFieldLengths(spec);
    compileBan('admission', 0, spec);
    if (this.#bans.size < this.#maxActiveBans) return;
    this.#bansRefused += 1;
    const nowMs = this.#now();
    const oldestExpiresMs = (this.#bans.oldest()?.createdMs ?? nowMs) + this.#banRetentionMs;
    // An expired ban waiting for the timer's prune would keep refusing: prune now.
    if (oldestExpiresMs <= nowMs && this.#state === 'running') this.#pruneInBackground();
    throw new BanLimitError(this.#maxActiveBans, oldestExpiresMs, Math.max(0, oldestExpiresMs - nowMs));
  }

  setMaxActiveBans(limit: number): void {
    this.#maxActiveBans = positiveInteger('maxActiveBans', limit);
  }

  async ban(spec: BanSpec, origin?: InvalidationOrigin): Promise<InvalidationResult> {
    this.#assertRunning();
    const ban = compileBan(origin?.id ?? randomUUID(), origin?.atMs ?? this.#stamp(), spec);
    // Delivered twice, or made so long ago that it has expired: nothing to do.
    if (this.#banIds.has(ban.id) || ban.createdMs <= this.#now() - this.#banRetentionMs) return { count: 0 };
    // From here on every lookup hides what the ban matches; the lurker then evicts it from the hot tier.
    this.#addBan(ban);
    this.#sequence.banned(ban);
    const evicted = this.#evictsEagerly ? this.#lurker.evict(ban) : Promise.resolve(0);
    const persisted = this.#persist([{ type: 'ban', id: ban.id, created_ms: ban.createdMs, ...ban.spec }]);
    if (ban.createdMs - this.#lastPruneMs >= this.#pruneIntervalMs) this.#pruneInBackground();
    const [count] = await Promise.all([evicted, persisted]);
    // The replicas date the ban by its id and creation time, as the cluster's copies of it do.
    const replicated = await this.#replicated({ type: 'ban', spec, origin: { id: ban.id, atMs: ban.createdMs } });
    return this.#done('ban', describeBan(ban.spec), ban.createdMs, count + replicated);
  }

  get activeBanCount(): number {
    return this.#bans.size;
  }

  get bansRefused(): number {
    return this.#bansRefused;
  }

  async refresh(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult> {
    this.#assertRunning();
    const keys = keysOfUrl(url);
    if (keys === undefined) throw new InvalidUrlError(`not an absolute http(s) URL with a host: ${url}`);
    const atMs = origin?.atMs ?? this.#stamp();
    // What was fetched after the refresh was made is already fresh from the origin.
    let count = 0;
    for (const key of keys) {
      this.#sequence.keyInvalidated(key);
      if (!this.#refreshes.hides(key, atMs)) this.#refreshes.record(key, atMs);
      this.#refreshes.takeExpired(this.#now() - this.#purgeWindowMs, this.#maxPurgeRecords);
      // An entry a refresh already made stale is left as it is (a worker reading the shared warm
      // tier after its primary rewrote it must not write it back again).
      count += this.#cache.rewriteVariants(key, (entry) => (entry.requestTimeMs <= atMs && !entry.forcedStale ? { ...entryFields(entry), forcedStale: true } : undefined));
    }
    await this.#cache.ownedWarm?.flush();
    count += await this.#replicated({ type: 'refresh', url, origin });
    return { ...this.#done('refresh', url, atMs, count), keys };
  }

  admissible(entry: CacheEntry): CacheEntry | undefined {
    if (this.#purges.hides(entry.key, entry.requestTimeMs) || this.#bans.hides(entry) !== undefined) return undefined;
    if (!entry.forcedStale && this.#refreshes.hides(entry.key, entry.requestTimeMs)) return { ...entryFields(entry), forcedStale: true };
    return entry;
  }

  isInvalidated(entry: CacheEntry): boolean {
    if (this.#purges.hides(entry.key, entry.requestTimeMs)) return true;
    const ban = this.#bans.hides(entry);
    if (ban === undefined) return false;
    ban.stats.hiddenLookups += 1;
    return true;
  }

  invalidationMark(): number {
    return this.#sequence.invalidationMark();
  }

  coveredSince(mark: number, entry: Pick<CacheEntry, 'key' | 'tags'>): boolean {
    return this.#sequence.coveredSince(mark, entry);
  }

  activeBans(): ActiveBan[] {
    return this.#bans.bans().map((ban) => this.#describe(ban));
  }

  matchingBans(entry: CacheEntry): ActiveBan[] {
    return this.#bans.matching(entry).map((ban) => this.#describe(ban));
  }

  recent(): RecentInvalidation[] {
    return this.#recent.newestFirst();
  }

  counts(): Record<InvalidationType, number> {
    return { ...this.#counts };
  }

  pruneNow(): Promise<PruneReport> {
    this.#pruning ??= this.#prune().finally(() => {
      this.#pruning = undefined;
    });
    return this.#pruning;
  }

  #assertRunning(): void {
    if (this.#state !== 'running') throw new InvalidatorStateError(`the invalidator is ${this.#state === 'new' ? 'not started' : 'stopped'}`);
  }

  #stamp(): number {
    this.#lastStampMs = Math.max(this.#now(), this.#lastStampMs);
    return this.#lastStampMs;
  }

  #replay(records: readonly JournalRecord[], path: string): void {
    // Appends are written in stamp order; sorting guards against a clock that went back between runs.
    const ordered = records
      .map((record) => ({ record, atMs: record.type === 'ban' ? record.created_ms : record.at_ms }))
      .sort((a, b) => a.atMs - b.atMs);
    for (const { record, atMs } of ordered) {
      this.#lastStampMs = Math.max(this.#lastStampMs, atMs);
      if (record.type === 'purge') {
        this.#purges.record(record.key, atMs);
        continue;
      }
      if (this.#banIds.has(record.id)) continue;
      try {
        this.#addBan(compileBan(record.id, atMs, record));
      } catch (error) {
        if (!(error instanceof InvalidBanError)) throw error;
        throw new CorruptJournalError(`${path} holds ban ${record.id} that is not valid: ${error.message}`);
      }
    }
  }

  #addBan(ban: Ban): void {
    this.#bans.add(ban);
    this.#banIds.add(ban.id);
  }

  /**
   * Removes the variants of `key` fetched at or before `atMs` from both tiers, and records the purge
   * for fetches in flight. A purge made now removes every variant; one made earlier elsewhere keeps
   * what this node fetched after it.
   */
  #purgeKey(key: string, atMs: number): number {
    this.#sequence.keyInvalidated(key);
    if (!this.#purges.hides(key, atMs)) this.#purges.record(key, atMs);
    const count = atMs >= this.#now() ? this.#cache.deleteVariants(key) : this.#cache.deleteFetchedBy(key, atMs);
    this.#expirePurgeRecords(this.#now());
    return count;
  }

  /**
   * Drops purge records past their window (or beyond the bound), first deleting what each still
   * hides, so a fetch that outran the purge cannot resurface once its record is gone.
   */
  #expirePurgeRecords(nowMs: number): { records: number; entriesDeleted: number } {
    const expired = this.#purges.takeExpired(nowMs - this.#purgeWindowMs, this.#maxPurgeRecords);
    let entriesDeleted = 0;
    for (const { key, atMs } of expired) entriesDeleted += this.#cache.deleteFetchedBy(key, atMs);
    return { records: expired.length, entriesDeleted };
  }

  async #prune(): Promise<PruneReport> {
    if (this.#state !== 'running') return { bansPruned: 0, purgeRecordsPruned: 0, entriesDeleted: 0 };
    const nowMs = this.#now();
    const purges = this.#expirePurgeRecords(nowMs);
    const expired = this.#bans.createdThrough(nowMs - this.#banRetentionMs);
    let entriesDeleted = purges.entriesDeleted;
    if (expired.length > 0) {
      const swept = await this.#sweep(expired);
      // Stopped mid-sweep: the bans stay, and the next start prunes them.
      if (swept === undefined) return { bansPruned: 0, purgeRecordsPruned: purges.records, entriesDeleted };
      entriesDeleted += swept;
      this.#bans.remove(expired);
      for (const ban of expired) this.#banIds.delete(ban.id);
    }
    this.#lastPruneMs = nowMs;
    if (this.#journal !== undefined && (expired.length > 0 || purges.records > 0)) {
      await this.#journal.rewrite(this.#journalRecords());
    }
    return { bansPruned: expired.length, purgeRecordsPruned: purges.records, entriesDeleted };
  }

  /**
   * Deletes from both tiers every entry the expiring bans still hide: hot entries stored by fetches
   * that outran a ban, and warm entries nobody looked up since. Without this a pruned ban would let
   * them be served again. It reads the tiers' summaries (the warm tier answers from its in-memory
   * index), never a body. Returns how many went, or undefined when stop() interrupted it.
   */
  async #sweep(expiring: readonly Ban[]): Promise<number | undefined> {
    const bans = new BanList({ rememberChecks: false });
    for (const ban of expiring) bans.add(ban);
    let deleted = 0;
    const slicer = new TimeSlicer();
    const warm = this.#cache.ownedWarm;
    const tiers = [
      { entries: this.#cache.hot.summaries(), remove: (e: StoredSummary) => this.#cache.delete(e.key, e.variantKey) },
      ...(warm === undefined ? [] : [{ entries: warm.summaries(), remove: (e: StoredSummary) => warm.delete(e.key, e.variantKey) }]),
    ];
    for (const tier of tiers) {
      for (const entry of tier.entries) {
        if (bans.hides(entry) !== undefined) {
          tier.remove(entry);
          deleted += 1;
        }
        if (slicer.spent()) {
          await slicer.pause();
          if (this.#state !== 'running') return undefined;
        }
      }
    }
    return deleted;
  }

  #journalRecords(): JournalRecord[] {
    const records: JournalRecord[] = this.#bans
      .bans()
      .map((ban) => ({ type: 'ban', id: ban.id, created_ms: ban.createdMs, ...ban.spec }));
    for (const { key, atMs } of this.#purges.records()) records.push({ type: 'purge', key, at_ms: atMs });
    return records;
  }

  /** Makes an operation durable: its journal records, and the warm tier's deletes and rewrites. */
  async #persist(records: readonly JournalRecord[]): Promise<void> {
    await Promise.all([records.length > 0 ? this.#journal?.append(records) : undefined, this.#cache.ownedWarm?.flush()]);
  }

  /** Applies an operation in the replicas, once this engine's tiers and journal have it. */
  #replicated(invalidation: ReplicatedInvalidation): Promise<number> {
    return this.#replicas?.apply(invalidation) ?? Promise.resolve(0);
  }

  #done(type: InvalidationType, argument: string, atMs: number, count: number): InvalidationResult {
    this.#counts[type] += 1;
    this.#recent.add({ type, argument, at: iso(atMs), count });
    return { count };
  }

  #describe(ban: Ban): ActiveBan {
    return {
      id: ban.id,
      ...ban.spec,
      created_at: iso(ban.createdMs),
      expires_at: iso(ban.createdMs + this.#banRetentionMs),
      evicted: ban.stats.evictedEntries,
      hidden: ban.stats.hiddenLookups,
    };
  }

  #pruneInBackground(): void {
    this.pruneNow().catch((error: unknown) => {
      this.#logger.error({ err: error }, 'pruning expired invalidations failed');
    });
  }
}

/** Creates the invalidation engine over `options.cache`; call start() before serving. */
export function createInvalidator(options: InvalidatorOptions): InvalidationEngine {
  return new Engine(options);
}
