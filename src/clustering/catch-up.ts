// Catch-up: a node that was away (restarted, partitioned, missed gossip) gets every invalidation it
// lacks from a peer's invalidation log, however many there were. Every push-pull exchange (the cluster
// library's delegate state) carries a digest of the log, one hash per minute of invalidations; a node
// that sees a peer's minute differ from its own asks the peer for that minute's invalidations
// (`catchup` channel, paged) and applies the ones it lacks, as of when they were made.
//
// Until a node has caught up once after starting, it is `catching up`: readiness says so and its data
// plane serves nothing it cached before it started (it goes to the owner or the origin instead). It has
// caught up when a peer's log has been merged, or when it is alone: no seed to join (or none answers
// the join) and nothing cached, or no peer in sight for a while.
//
// A peer's log reaches back to its coverage (the 24 h window, its bound in URLs, or its own life). A
// node that was away since before that coverage cannot learn all it missed: it distrusts every entry
// it fetched before the coverage (a local ban on everything older), and counts the gap.
import { MalformedRequestError, type Clock, type RequestHandler, type RequestOptions, type TimerHandle } from '../../cluster/index.js';
import { BUCKET_MS, type BucketDigest, type InvalidationLog } from './invalidation-log.js';
import { messagesOf } from './gossip-batches.js';
import type { InvalidationMessage } from './invalidation-message.js';

/** The channel a node asks a peer for the invalidations of some minutes on. */
export const CATCH_UP_CHANNEL = 'catchup';

/** Recent minutes are left to gossip: a difference there is usually an invalidation still on its way. */
const SETTLE_MS = 10_000;
/** How often a caught-up node with live peers records that it is in sync, and prunes its log. */
export const SYNC_INTERVAL_MS = 10_000;
/**
 * How long a node without seeds but with a cache waits for a peer to contact it before it takes itself
 * to be alone: peers retry a node they saw fail every 10 s (the library's reconnect interval), and push-pull
 * with a random member every 30 s.
 */
export const ALONE_AFTER_MS = 30_000;
/** How often a node catching up again asks a live peer, until one answers. */
const AGAIN_EVERY_MS = 2_000;
/** URLs per catch-up answer: about 500 KB of JSON. */
const PAGE_WEIGHT = 5_000;
/** Minutes one catch-up request may name: a day's worth. */
const MAX_BUCKETS_PER_REQUEST = 24 * 60;
const STATE_VERSION = 1;

export interface CatchUpMember {
  readonly localMember: { readonly name: string };
  peers(): readonly { readonly name: string; readonly state: string }[];
  request(member: string, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  handleRequest(channel: string, handler: RequestHandler): void;
}

/** How the node left the catching-up state. */
export type CaughtUpHow =
  | { kind: 'peer'; peer: string; applied: number; gapBeforeMs: number | undefined }
  | { kind: 'alone'; reason: string };

export interface CatchUpOptions {
  member: CatchUpMember;
  log: InvalidationLog;
  /** Applies an invalidation another node made (delivery's receive on the catch-up path). */
  receive: (message: InvalidationMessage) => Promise<void>;
  clock: Clock;
  /** Wall clock, ms since the epoch (invalidation times are). */
  now: () => number;
  /** Distrusts every cached entry fetched before `atMs` (a gap the cluster cannot fill). */
  distrustBefore: (atMs: number) => Promise<void>;
  /** Whether this node holds cached entries: a gap matters only then, and alone it need not wait. */
  holdsEntries: () => boolean;
  requestTimeoutMs: number;
  onCaughtUp?: (how: CaughtUpHow) => void;
  onError?: (error: unknown) => void;
}

interface RemoteState {
  node: string;
  coverage: number | undefined;
  buckets: BucketDigest[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

function parseState(bytes: Uint8Array): RemoteState | undefined {
  const value = parseJson(bytes);
  if (value === undefined || value.v !== STATE_VERSION || typeof value.node !== 'string' || !Array.isArray(value.buckets)) return undefined;
  const buckets: BucketDigest[] = [];
  for (const item of value.buckets) {
    if (!Array.isArray(item) || item.length !== 3) return undefined;
    const [bucket, count, hash] = item as unknown[];
    if (!isCount(bucket) || !isCount(count) || typeof hash !== 'string') return undefined;
    buckets.push({ bucket, count, hash });
  }
  return { node: value.node, coverage: isTime(value.coverage) ? value.coverage : undefined, buckets };
}

export class CatchUp {
  private caught = false;
  private readonly pulling = new Set<string>();
  private syncTimer: TimerHandle | undefined;
  private aloneTimer: TimerHandle | undefined;
  private againTimer: TimerHandle | undefined;
  /** Peers whose logs must be merged before the node has caught up (again: a majority of its view). */
  private required = 1;
  /** Peers whose logs were merged since the node began catching up (again). */
  private readonly merged = new Set<string>();
  private stopped = false;

  constructor(private readonly options: CatchUpOptions) {}

  /** Serves the catch-up channel and starts the sync heartbeat; `seeds` is how many seeds the node joins. */
  start(seeds: number): void {
    const { member, log } = this.options;
    member.handleRequest(CATCH_UP_CHANNEL, async (_from, body) => {
      const request = parseJson(body);
      if (!Array.isArray(request?.buckets)) throw new MalformedRequestError('a catch-up request is a JSON object with an array of buckets');
      const buckets = request.buckets.filter(isCount).slice(0, MAX_BUCKETS_PER_REQUEST);
      const { messages, rest } = log.messagesIn(buckets, PAGE_WEIGHT);
      return encoder.encode(JSON.stringify({ coverage: log.coverageMs() ?? null, m: messages, rest }));
    });
    this.syncTimer = this.options.clock.setTimer(SYNC_INTERVAL_MS, () => this.heartbeat());
    if (seeds === 0) {
      if (!this.options.holdsEntries()) void this.finishAlone('no seed to join and nothing cached');
      else this.aloneTimer = this.options.clock.setTimer(ALONE_AFTER_MS, () => void this.finishAlone(`no peer in ${ALONE_AFTER_MS / 1000} s`));
    }
  }

  /**
   * No seed answered the join: the node is the cluster until one does. With nothing cached it has
   * nothing to distrust, so it has caught up; with entries it waits for a peer, as after a restart.
   */
  noSeedAnswered(): void {
    if (this.options.holdsEntries()) return;
    this.finishAlone('no seed answered and nothing cached').catch((error: unknown) => this.options.onError?.(error));
  }

  stop(): void {
    this.stopped = true;
    for (const timer of [this.syncTimer, this.aloneTimer, this.againTimer]) if (timer !== undefined) this.options.clock.clearTimer(timer);
  }

  /**
   * The node may have missed invalidations since `sinceMs` (it lost its lease, was paused, was declared
   * dead): it is catching up again until the logs of `required` peers are merged (a majority of its
   * view: a peer that was cut off with it lacks what it lacks, and no more than a minority can have
   * been), asking every live peer it has not merged yet for the minutes since then, now and every
   * AGAIN_EVERY_MS.
   */
  again(required: number, sinceMs: number): void {
    if (this.stopped) return;
    this.caught = false;
    this.required = Math.max(1, required);
    this.merged.clear();
    if (this.againTimer !== undefined) this.options.clock.clearTimer(this.againTimer);
    const buckets = new Set(this.options.log.digest().map((digest) => digest.bucket));
    const nowBucket = Math.floor(this.options.now() / BUCKET_MS);
    for (let bucket = Math.floor(sinceMs / BUCKET_MS) - 1; bucket <= nowBucket; bucket++) buckets.add(bucket);
    const ask = (): void => {
      this.againTimer = undefined;
      if (this.caught || this.stopped) return;
      for (const peer of this.options.member.peers()) {
        if (!this.merged.has(peer.name)) this.pull(peer.name, [...buckets]).catch((error: unknown) => this.options.onError?.(error));
      }
      this.againTimer = this.options.clock.setTimer(AGAIN_EVERY_MS, ask);
    };
    ask();
  }

  /** This node's part of a push-pull exchange: who it is, how far back its log reaches, its digest. */
  state(): Uint8Array {
    const { log, member } = this.options;
    const buckets = log.digest().map((digest) => [digest.bucket, digest.count, digest.hash]);
    return encoder.encode(JSON.stringify({ v: STATE_VERSION, node: member.localMember.name, coverage: log.coverageMs() ?? null, buckets }));
  }

  /** A peer's part of a push-pull exchange: fetches the minutes whose digest differs from ours. */
  merge(bytes: Uint8Array): void {
    const remote = parseState(bytes);
    if (remote === undefined || remote.node === this.options.member.localMember.name || this.stopped) return;
    const settledBefore = this.caught ? Math.floor((this.options.now() - SETTLE_MS) / BUCKET_MS) : Number.POSITIVE_INFINITY;
    const differing = remote.buckets
      .filter((digest) => digest.count > 0 && digest.bucket < settledBefore && !this.options.log.sameBucket(digest))
      .map((digest) => digest.bucket);
    const done = (error: unknown): void => this.options.onError?.(error);
    if (differing.length > 0) this.pull(remote.node, differing).catch(done);
    // Nothing to fetch: the peer's log adds nothing to ours, and its digest says how far back it reaches.
    else if (!this.caught) this.finishFromPeer(remote.node, remote.coverage, 0).catch(done);
  }

  /** Reconciles every minute, recent ones included, with a random live peer (a pulled batch was lost). */
  reconcileWithAPeer(): void {
    const peers = this.options.member.peers().filter((peer) => peer.state === 'alive');
    const peer = peers[Math.floor(this.options.clock.now() % Math.max(1, peers.length))];
    if (peer === undefined) return;
    const buckets = this.options.log.digest().map((digest) => digest.bucket);
    const nowBucket = Math.floor(this.options.now() / BUCKET_MS);
    for (let bucket = nowBucket - 5; bucket <= nowBucket; bucket++) if (!buckets.includes(bucket)) buckets.push(bucket);
    this.pull(peer.name, buckets).catch((error: unknown) => this.options.onError?.(error));
  }

  /** Asks `peer` for the invalidations of `buckets`, page by page, and applies what is new. */
  private async pull(peer: string, buckets: readonly number[]): Promise<void> {
    if (this.pulling.has(peer)) return;
    this.pulling.add(peer);
    try {
      let wanted = [...buckets];
      let coverage: number | undefined;
      let applied = 0;
      for (;;) {
        const answer = parseJson(
          await this.options.member.request(peer, CATCH_UP_CHANNEL, encoder.encode(JSON.stringify({ buckets: wanted.slice(0, MAX_BUCKETS_PER_REQUEST) })), {
            timeoutMs: this.options.requestTimeoutMs,
          }),
        );
        const messages = messagesOf(answer);
        if (answer === undefined || messages === undefined) throw new Error(`${peer} answered catch-up with something else`);
        coverage = isTime(answer.coverage) ? answer.coverage : undefined;
        // Applied together: their journal writes share fsyncs, and each takes effect as of when it was made,
        // so their order does not matter.
        const fresh = messages.filter((message) => !this.options.log.knows(message));
        await Promise.all(fresh.map((message) => this.options.receive(message)));
        applied += fresh.length;
        const rest = Array.isArray(answer.rest) ? answer.rest.filter(isCount) : [];
        wanted = [...rest, ...wanted.slice(MAX_BUCKETS_PER_REQUEST)];
        if (wanted.length === 0 || this.stopped) break;
      }
      if (!this.caught && !this.stopped) await this.finishFromPeer(peer, coverage, applied);
    } finally {
      this.pulling.delete(peer);
    }
  }

  /**
   * After the first merge of a peer's log: if the node was away since before that log reaches back
   * (or never synced), what it cached before is distrusted, and its own log reaches back as far as
   * the peer's does.
   */
  private async finishFromPeer(peer: string, peerCoverage: number | undefined, applied: number): Promise<void> {
    const { log, now } = this.options;
    // A peer whose log was never complete vouches for nothing before now.
    const reachesBack = peerCoverage ?? now();
    const synced = log.syncedThroughMs;
    const gap = synced === undefined || reachesBack > synced;
    let gapBeforeMs: number | undefined;
    if (gap && this.options.holdsEntries()) {
      await this.options.distrustBefore(reachesBack);
      gapBeforeMs = reachesBack;
    }
    if (log.completeSinceMs === undefined || gap) await log.setCompleteSince(reachesBack);
    this.merged.add(peer);
    if (this.merged.size < this.required) return;
    await this.caughtUpNow({ kind: 'peer', peer, applied, gapBeforeMs });
  }

  private async finishAlone(reason: string): Promise<void> {
    if (this.caught || this.stopped) return;
    const { log, now } = this.options;
    // Alone from the start: there was nothing to miss before now.
    if (log.completeSinceMs === undefined) await log.setCompleteSince(now());
    await this.caughtUpNow({ kind: 'alone', reason });
  }

  private async caughtUpNow(how: CaughtUpHow): Promise<void> {
    if (this.caught) return;
    this.caught = true;
    if (this.aloneTimer !== undefined) this.options.clock.clearTimer(this.aloneTimer);
    this.aloneTimer = undefined;
    if (how.kind === 'peer') await this.options.log.markSynced(this.options.now());
    this.options.onCaughtUp?.(how);
  }

  /** While caught up and among peers the node has every invalidation: it says so on disk, and prunes. */
  private heartbeat(): void {
    this.syncTimer = undefined;
    if (this.stopped) return;
    const { log, member } = this.options;
    const work = async (): Promise<void> => {
      if (this.caught && member.peers().some((peer) => peer.state === 'alive')) await log.markSynced(this.options.now());
      await log.prune();
    };
    work().catch((error: unknown) => this.options.onError?.(error));
    this.syncTimer = this.options.clock.setTimer(SYNC_INTERVAL_MS, () => this.heartbeat());
  }
}
