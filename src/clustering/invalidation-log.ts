// Every invalidation of the cluster that still matters, compacted, kept for catch-up: a node that was
// away (restart, partition, gossip loss) gets from a peer's log what its own lacks. What matters:
// - every ban younger than the ban retention (24 h, spec §1.1): an older one has expired everywhere;
// - every purge, batch purge and refresh younger than the same window, up to a bound in URLs.
// Compaction: an invalidation covered by a newer one is not kept (a purge of a URL covers older purges
// and refreshes of it, a refresh older refreshes, a ban older identical bans); which ones are kept
// depends only on the set seen, not on the order they came in, so two nodes that saw the same set
// hold the same log. Where the log stops reaching back (the window, the bound) is its coverage: a node
// away for longer than a peer's coverage cannot learn what it missed and must distrust its cache.
//
// The log answers "seen already?" for delivery too (an invalidation it holds or that a held one
// covers adds nothing), so seen ids survive restarts with it. It is persisted through a LogStore
// (svc: a journal file beside the engine's; the simulator: memory that outlives a simulated restart).
import { normaliseBanSpec } from '../invalidation/ban.js';
import { invalidationWeight, type InvalidationMessage } from './invalidation-message.js';

export type LogRecord =
  | { type: 'invalidation'; message: InvalidationMessage }
  /** The node had every invalidation of the cluster through this time (ms since the epoch). */
  | { type: 'synced'; at: number }
  /** The log holds every invalidation made since this time (within the window). */
  | { type: 'complete_since'; at: number };

/** Where the log's records go. Appends resolve once durable; a rewrite replaces them all. */
export interface LogStore {
  append(records: readonly LogRecord[]): Promise<void>;
  rewrite(records: readonly LogRecord[]): Promise<void>;
}

/** The digest of one minute of the log: how many invalidations made in it are held, and a hash of their ids. */
export interface BucketDigest {
  bucket: number;
  count: number;
  hash: string;
}

/** Invalidations are grouped by the minute they were made for digests and catch-up. */
export const BUCKET_MS = 60_000;
/** The ban retention of spec §1.1: nothing older can still hide an entry anywhere. */
export const DEFAULT_LOG_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * URLs held at most (a ban counts one, a batch its URLs): about 10 MB in memory. Past it the oldest go
 * and the coverage moves forward, so a node that missed more than this distrusts its older entries.
 */
export const DEFAULT_LOG_MAX_WEIGHT = 100_000;
/** Rewrite the store once it holds this many lines more than twice the live ones (dropped and covered ones). */
const REWRITE_SLACK_LINES = 1_000;

interface Held {
  readonly message: InvalidationMessage;
  readonly cover: string | undefined;
  readonly bucket: number;
  readonly hashHi: number;
  readonly hashLo: number;
  readonly weight: number;
  removed: boolean;
}

export interface InvalidationLogOptions {
  store: LogStore;
  /** The cache key of a URL, for compaction; undefined for a URL that has none. */
  keyOf: (url: string) => string | undefined;
  /** Wall clock, ms since the epoch. */
  now: () => number;
  retentionMs?: number;
  maxWeight?: number;
}

/** FNV-1a over the UTF-16 units of `text`, from `basis`: two of them make a 64-bit id hash. */
function fnv1a(text: string, basis: number): number {
  let hash = basis;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

function hex(hi: number, lo: number): string {
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** Whether `held` is newer than `message`, or it: ties on time go to the larger id, so every node agrees. */
function newerOrSame(held: InvalidationMessage, message: InvalidationMessage): boolean {
  return held.at > message.at || (held.at === message.at && held.id >= message.id);
}

export class InvalidationLog {
  private readonly byId = new Map<string, Held>();
  /** The newest held invalidation per cover key. */
  private readonly byCover = new Map<string, Held>();
  /** Held invalidations by the time they were made, oldest first; removed ones are skipped and swept. */
  private order: Held[] = [];
  private removedInOrder = 0;
  private readonly buckets = new Map<number, { count: number; hi: number; lo: number }>();
  private heldWeight = 0;
  private completeSince: number | undefined;
  /** The newest time an invalidation was dropped for the bound: the log reaches back no further. */
  private droppedThrough = Number.NEGATIVE_INFINITY;
  private synced: number | undefined;
  private linesOnDisk = 0;
  private readonly retentionMs: number;
  private readonly maxWeight: number;

  private constructor(private readonly options: InvalidationLogOptions) {
    this.retentionMs = options.retentionMs ?? DEFAULT_LOG_RETENTION_MS;
    this.maxWeight = options.maxWeight ?? DEFAULT_LOG_MAX_WEIGHT;
  }

  /** A log holding what `records` (as the store returned them, oldest first) describe. */
  static restore(records: readonly LogRecord[], options: InvalidationLogOptions): InvalidationLog {
    const log = new InvalidationLog(options);
    for (const record of records) {
      if (record.type === 'invalidation') {
        if (!log.knows(record.message)) log.hold(record.message);
      } else if (record.type === 'synced') {
        log.synced = Math.max(log.synced ?? record.at, record.at);
      } else {
        log.completeSince = Math.max(log.completeSince ?? record.at, record.at);
      }
    }
    log.linesOnDisk = records.length;
    log.trim();
    return log;
  }

  /** Invalidations held. */
  get size(): number {
    return this.byId.size;
  }

  /** URLs held (a ban counts one). */
  get weight(): number {
    return this.heldWeight;
  }

  /** The time through which this node last had every invalidation of the cluster; undefined if never. */
  get syncedThroughMs(): number | undefined {
    return this.synced;
  }

  /** Since when the log holds everything it should, or undefined for a log that was never complete. */
  get completeSinceMs(): number | undefined {
    return this.completeSince;
  }

  /**
   * Since when this log holds every invalidation (compacted): its own completeness, the window and the
   * bound, whichever is latest. Undefined for a log that was never complete (a fresh node).
   */
  coverageMs(): number | undefined {
    if (this.completeSince === undefined) return undefined;
    return Math.max(this.completeSince, this.options.now() - this.retentionMs, this.droppedThrough);
  }

  /** Whether `message` adds nothing here: it is held, covered by a newer held one, or past the window. */
  knows(message: InvalidationMessage): boolean {
    if (this.byId.has(message.id)) return true;
    if (message.at < this.options.now() - this.retentionMs) return true;
    return this.coveringOf(message) !== undefined;
  }

  holds(id: string): boolean {
    return this.byId.has(id);
  }

  /**
   * Holds `message`, dropping what it covers; resolves once it is durable. One the log knows by now (a
   * copy, or a newer one covering it, added while it was being applied) leaves the log as it is.
   */
  add(message: InvalidationMessage): Promise<void> {
    if (this.knows(message)) return Promise.resolve();
    this.hold(message);
    this.trim();
    return this.write([{ type: 'invalidation', message }]);
  }

  /** Records that this node had everything through `atMs`. */
  markSynced(atMs: number): Promise<void> {
    this.synced = Math.max(this.synced ?? atMs, atMs);
    return this.write([{ type: 'synced', at: this.synced }]);
  }

  /** Sets since when the log is complete (a fresh log adopting a peer's, or a gap moving it forward). */
  setCompleteSince(atMs: number): Promise<void> {
    this.completeSince = atMs;
    return this.write([{ type: 'complete_since', at: atMs }]);
  }

  /** The digest of every minute held, oldest first. */
  digest(): BucketDigest[] {
    const digest: BucketDigest[] = [];
    for (const [bucket, { count, hi, lo }] of this.buckets) digest.push({ bucket, count, hash: hex(hi, lo) });
    return digest.sort((a, b) => a.bucket - b.bucket);
  }

  /** Whether this log's digest of `bucket` equals `other`. */
  sameBucket(other: BucketDigest): boolean {
    const mine = this.buckets.get(other.bucket);
    if (mine === undefined) return other.count === 0;
    return mine.count === other.count && hex(mine.hi, mine.lo) === other.hash;
  }

  /**
   * The invalidations held in `buckets`, bucket by bucket, until `maxWeight` URLs; `rest` lists the
   * buckets left for another call.
   */
  messagesIn(buckets: readonly number[], maxWeight: number): { messages: InvalidationMessage[]; rest: number[] } {
    const wanted = new Set(buckets);
    const byBucket = new Map<number, InvalidationMessage[]>();
    for (const held of this.order) {
      if (held.removed || !wanted.has(held.bucket)) continue;
      let list = byBucket.get(held.bucket);
      if (list === undefined) byBucket.set(held.bucket, (list = []));
      list.push(held.message);
    }
    const messages: InvalidationMessage[] = [];
    const rest: number[] = [];
    let weight = 0;
    for (const bucket of [...wanted].sort((a, b) => a - b)) {
      const list = byBucket.get(bucket) ?? [];
      const bucketWeight = list.reduce((sum, message) => sum + invalidationWeight(message), 0);
      // Whole buckets only, so the other side never takes a half bucket for a complete one; the first
      // bucket goes whatever its weight, so every call makes progress.
      if (messages.length > 0 && weight + bucketWeight > maxWeight) {
        rest.push(bucket);
        continue;
      }
      messages.push(...list);
      weight += bucketWeight;
    }
    return { messages, rest };
  }

  /** Drops what is past the window; rewrites the store once it holds mostly dead lines. */
  async prune(): Promise<void> {
    this.trim();
    if (this.linesOnDisk > 2 * (this.byId.size + 2) + REWRITE_SLACK_LINES) await this.rewrite();
  }

  /** Rewrites the store with exactly what is held. */
  rewrite(): Promise<void> {
    const records: LogRecord[] = [];
    if (this.completeSince !== undefined) records.push({ type: 'complete_since', at: this.completeSince });
    if (this.synced !== undefined) records.push({ type: 'synced', at: this.synced });
    for (const held of this.order) if (!held.removed) records.push({ type: 'invalidation', message: held.message });
    this.linesOnDisk = records.length;
    return this.options.store.rewrite(records);
  }

  private write(records: readonly LogRecord[]): Promise<void> {
    this.linesOnDisk += records.length;
    return this.options.store.append(records);
  }

  /** The cover key: invalidations with one key may cover each other. A batch covers nothing. */
  private coverKey(message: InvalidationMessage): string | undefined {
    switch (message.type) {
      case 'purge':
      case 'refresh': {
        const key = this.options.keyOf(message.url);
        return key === undefined ? undefined : `${message.type === 'purge' ? 'p' : 'r'} ${key}`;
      }
      case 'ban':
        return `b ${JSON.stringify(normaliseBanSpec(message))}`;
      case 'purge_batch':
        return undefined;
    }
  }

  /** The held invalidation that covers `message`, if any. */
  private coveringOf(message: InvalidationMessage): Held | undefined {
    const cover = this.coverKey(message);
    if (cover === undefined) return undefined;
    const same = this.byCover.get(cover);
    if (same !== undefined && newerOrSame(same.message, message)) return same;
    if (message.type === 'refresh') {
      // A purge made at or after a refresh removes what the refresh would mark stale.
      const purge = this.byCover.get(`p${cover.slice(1)}`);
      if (purge !== undefined && purge.message.at >= message.at) return purge;
    }
    return undefined;
  }

  private hold(message: InvalidationMessage): void {
    const cover = this.coverKey(message);
    if (cover !== undefined) {
      const older = this.byCover.get(cover);
      if (older !== undefined) this.remove(older);
      if (message.type === 'purge') {
        const refresh = this.byCover.get(`r${cover.slice(1)}`);
        if (refresh !== undefined && refresh.message.at <= message.at) this.remove(refresh);
      }
    }
    const held: Held = {
      message,
      cover,
      bucket: Math.floor(message.at / BUCKET_MS),
      hashHi: fnv1a(message.id, 2166136261),
      hashLo: fnv1a(message.id, 84696351),
      weight: invalidationWeight(message),
      removed: false,
    };
    this.byId.set(message.id, held);
    if (cover !== undefined) this.byCover.set(cover, held);
    let at = this.order.length;
    while (at > 0 && (this.order[at - 1] as Held).message.at > message.at) at -= 1;
    this.order.splice(at, 0, held);
    this.heldWeight += held.weight;
    const bucket = this.buckets.get(held.bucket) ?? { count: 0, hi: 0, lo: 0 };
    bucket.count += 1;
    bucket.hi = (bucket.hi ^ held.hashHi) >>> 0;
    bucket.lo = (bucket.lo ^ held.hashLo) >>> 0;
    this.buckets.set(held.bucket, bucket);
  }

  private remove(held: Held): void {
    held.removed = true;
    this.removedInOrder += 1;
    this.byId.delete(held.message.id);
    if (held.cover !== undefined && this.byCover.get(held.cover) === held) this.byCover.delete(held.cover);
    this.heldWeight -= held.weight;
    const bucket = this.buckets.get(held.bucket);
    if (bucket !== undefined) {
      bucket.count -= 1;
      bucket.hi = (bucket.hi ^ held.hashHi) >>> 0;
      bucket.lo = (bucket.lo ^ held.hashLo) >>> 0;
      if (bucket.count === 0) this.buckets.delete(held.bucket);
    }
  }

  /** Drops what is past the window, then the oldest beyond the bound (moving the coverage forward). */
  private trim(): void {
    const oldestMs = this.options.now() - this.retentionMs;
    let head = 0;
    while (head < this.order.length) {
      const held = this.order[head] as Held;
      if (!held.removed) {
        if (held.message.at < oldestMs) this.remove(held);
        else if (this.heldWeight > this.maxWeight) {
          this.droppedThrough = Math.max(this.droppedThrough, held.message.at);
          this.remove(held);
        } else break;
      }
      head += 1;
    }
    if (head > 0) {
      // Every held one before `head` is removed by now, and counted in removedInOrder.
      this.order.splice(0, head);
      this.removedInOrder -= head;
    }
    if (this.removedInOrder > this.order.length / 2 && this.removedInOrder > 64) {
      this.order = this.order.filter((held) => !held.removed);
      this.removedInOrder = 0;
    }
  }
}
