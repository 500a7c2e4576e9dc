// How an invalidation reaches the other nodes (spec §1.4, §6.1), built from the cluster library's
// primitives only, so the svc node and the simulator run this same code:
//   strong:   purge, ban and refresh go by HTTP fan-out to every live peer AND by gossip (dual path):
//             every node may hold a copy of a refreshed object (the owner, a former owner), so refresh
//             fans out like the others;
//   eventual: everything goes by gossip only.
// Gossip carries invalidations in batches, and announces a batch too large for a packet so that nodes
// fetch it over the reliable path (gossip-batches.ts). A node applies each invalidation once, by id,
// whichever path brings it first; the invalidation log (invalidation-log.ts) remembers what it applied,
// across restarts, and catch-up (catch-up.ts) brings what a node missed.
import { MalformedRequestError, type Clock, type FanOutOptions, type FanOutResult, type RequestHandler, type RequestOptions, type TimerHandle } from '../../cluster/index.js';
import { decodeBatch, decodeGossip, decodePullRequest, encodeBatch, encodePull, MAX_PULL_SEQS, Outbox } from './gossip-batches.js';
import { decodeInvalidation, encodeInvalidation, type InvalidationKind, type InvalidationMessage } from './invalidation-message.js';
import type { InvalidationLog } from './invalidation-log.js';

export type ClusterMode = 'strong' | 'eventual';
export type DeliveryPath = 'local' | 'http' | 'gossip' | 'catchup';

/** What delivery needs of a cluster member (the library's ClusterMember has it all). */
export interface DeliveryMember {
  readonly localMember: { readonly name: string };
  /** Every member that has not left, live or failed, self excluded: what a fan-out is counted against. */
  view(): string[];
  /** Largest payload one gossip broadcast carries. */
  readonly maxBroadcastBytes: number;
  fanOut(channel: string, body: Uint8Array, options: FanOutOptions): Promise<FanOutResult[]>;
  request(member: string, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  broadcast(payload: Uint8Array): void;
  onBroadcast(handler: (payload: Uint8Array, origin: string) => void): () => void;
  handleRequest(channel: string, handler: RequestHandler): void;
}

/** Counts what delivery does, for the spec §6.5 cluster metrics. */
export interface DeliveryCounters {
  /** One invalidation sent by HTTP fan-out. */
  http(type: InvalidationKind): void;
  /** One invalidation sent by gossip. */
  gossip(type: InvalidationKind): void;
  /** One peer the HTTP path did not reach; `reason` is the fan-out outcome (timeout, refused, error). */
  failure(type: InvalidationKind, reason: string): void;
  /** One invalidation from another node applied here, by the path that brought it first. */
  applied?(type: InvalidationKind, path: DeliveryPath): void;
}

export interface DeliveryOptions {
  member: DeliveryMember;
  mode: ClusterMode;
  /** What this node has applied, which decides what is new. */
  log: InvalidationLog;
  /** Applies an invalidation another node made on this node. */
  apply: (message: InvalidationMessage, path: DeliveryPath) => Promise<void> | void;
  counters: DeliveryCounters;
  /** Timers of gossip batching and pull retries. */
  clock: Clock;
  /** Names this node's outbox, so a pull after a restart never gets another life's batches. */
  session: string;
  /** Per-peer bound of the HTTP paths (the peer timeout): a suspect or paused peer costs no more. */
  httpTimeoutMs?: number;
  /** Told when a pulled batch could not be had: catch-up then reconciles with a peer. */
  onPullFailed?: () => void;
  onError?: (error: unknown) => void;
}

/** Channels of the HTTP path; the UDP transport serves them as `/v1/peer/<channel>` (spec §4.1). */
export const INVALIDATION_CHANNELS = { purge: 'purge', ban: 'ban', refresh: 'refresh' } as const;
/** The channel nodes fetch announced batches on. */
export const PULL_CHANNEL = 'invalidations';

/** 1 s: the spec's promise for a strong purge to reach all. */
const DEFAULT_HTTP_TIMEOUT_MS = 1_000;
/** A lone invalidation waits this long for company before it is gossiped. */
const GOSSIP_FIRST_DELAY_MS = 10;
/** Batches go out at most this often: ten a second keep a burst of a thousand invalidations to a few
 * announcements each gossip round, well within what gossip carries. */
const GOSSIP_MIN_INTERVAL_MS = 100;
/** A failed pull is tried again after this, up to PULL_ATTEMPTS times, before catch-up takes over. */
const PULL_RETRY_MS = 1_000;
const PULL_ATTEMPTS = 3;
const OK = new Uint8Array([1]);

function channelOf(type: InvalidationKind): string {
  if (type === 'ban') return INVALIDATION_CHANNELS.ban;
  if (type === 'refresh') return INVALIDATION_CHANNELS.refresh;
  return INVALIDATION_CHANNELS.purge;
}

/** Names of missed peers an answer lists; the count is always whole. */
export const MISSED_NAMES_SHOWN = 16;

export interface PublishReport {
  /** Members of the view the HTTP path reached (strong mode), or 0. */
  confirmed: number;
  /**
   * Members of the view when the invalidation was accepted that the HTTP path did not reach: live ones
   * that failed to answer, and suspect or dead ones it did not try. Gossip and catch-up still carry it.
   */
  missed: number;
  /** The first MISSED_NAMES_SHOWN of them, sorted. */
  missedNames: string[];
  /** All of them (for the lease wait and the log). */
  allMissed: string[];
}

/** Batches announced by one origin that this node still has to fetch. */
interface PendingPull {
  session: string;
  seqs: Set<number>;
  running: boolean;
  attempts: number;
}

export class InvalidationDelivery {
  private readonly httpTimeoutMs: number;
  private readonly outbox: Outbox;
  private unsubscribe: (() => void) | undefined;
  /** Ids being applied right now: a copy arriving meanwhile by the other path is dropped. */
  private readonly applying = new Set<string>();
  private outgoing: InvalidationMessage[] = [];
  private flushTimer: TimerHandle | undefined;
  private lastFlushMs = Number.NEGATIVE_INFINITY;
  private readonly pulls = new Map<string, PendingPull>();
  private readonly timers = new Set<TimerHandle>();
  private stopped = false;

  constructor(private readonly options: DeliveryOptions) {
    this.httpTimeoutMs = options.httpTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
    this.outbox = new Outbox(options.session);
  }

  /** Registers the HTTP handlers and the gossip subscription. */
  start(): void {
    const { member } = this.options;
    const receive: RequestHandler = async (_from, body) => {
      await this.receive(decodeInvalidation(body), 'http');
      return OK;
    };
    for (const channel of Object.values(INVALIDATION_CHANNELS)) member.handleRequest(channel, receive);
    member.handleRequest(PULL_CHANNEL, async (_from, body) => {
      const request = decodePullRequest(body);
      if (request === undefined) throw new MalformedRequestError('a pull request is a JSON object with a session and an array of batch numbers');
      return encodeBatch(this.outbox.take(request.session, request.seqs, this.options.clock.now()));
    });
    this.unsubscribe = member.onBroadcast((payload, origin) => {
      const gossip = decodeGossip(payload);
      if (gossip === undefined) return; // Another consumer's broadcast.
      if (gossip.kind === 'batch') for (const message of gossip.messages) this.receiveInBackground(message, 'gossip');
      else this.schedulePull(origin, gossip.session, gossip.seqs);
    });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const timer of this.timers) this.options.clock.clearTimer(timer);
    this.timers.clear();
    if (this.flushTimer !== undefined) this.options.clock.clearTimer(this.flushTimer);
    this.flushTimer = undefined;
  }

  /**
   * Sends an invalidation this node made (and already applied) to the others. Resolves once the HTTP
   * path is done (strong) or the message is queued for gossip (eventual); it is in the log before.
   */
  async publish(message: InvalidationMessage): Promise<PublishReport> {
    await this.options.log.add(message);
    const { member, mode, counters } = this.options;
    this.gossip(message);
    if (mode === 'eventual') return { confirmed: 0, missed: 0, missedNames: [], allMissed: [] };
    const view = member.view();
    counters.http(message.type);
    const results = await member.fanOut(channelOf(message.type), encodeInvalidation(message), { timeoutMs: this.httpTimeoutMs });
    for (const result of results) if (result.outcome !== 'ok') counters.failure(message.type, result.outcome);
    const confirmed = new Set(results.filter((result) => result.outcome === 'ok').map((result) => result.member.name));
    const allMissed = view.filter((name) => !confirmed.has(name)).sort();
    return { confirmed: confirmed.size, missed: allMissed.length, missedNames: allMissed.slice(0, MISSED_NAMES_SHOWN), allMissed };
  }

  /**
   * Applies an invalidation from another node unless this node has it already (or one that covers
   * it); resolves once it is applied and recorded.
   */
  async receive(message: InvalidationMessage, path: DeliveryPath): Promise<void> {
    const { log } = this.options;
    if (this.applying.has(message.id) || log.knows(message)) return;
    this.applying.add(message.id);
    try {
      // Applied first, recorded after: a crash in between makes the node apply it again (at the time
      // it was made: the same effect), never forget it.
      await this.options.apply(message, path);
      await log.add(message);
      this.options.counters.applied?.(message.type, path);
    } finally {
      this.applying.delete(message.id);
    }
  }

  private receiveInBackground(message: InvalidationMessage, path: DeliveryPath): void {
    this.receive(message, path).catch((error: unknown) => this.options.onError?.(error));
  }

  /** Queues an invalidation for the next gossip batch. */
  private gossip(message: InvalidationMessage): void {
    this.options.counters.gossip(message.type);
    this.outgoing.push(message);
    if (this.flushTimer !== undefined || this.stopped) return;
    const now = this.options.clock.now();
    const delayMs = Math.max(GOSSIP_FIRST_DELAY_MS, this.lastFlushMs + GOSSIP_MIN_INTERVAL_MS - now);
    this.flushTimer = this.options.clock.setTimer(delayMs, () => this.flush());
  }

  /** Gossips what is queued: inline when it fits half a packet, else as an announcement to pull. */
  private flush(): void {
    this.flushTimer = undefined;
    const messages = this.outgoing;
    this.outgoing = [];
    if (messages.length === 0 || this.stopped) return;
    const { member, clock } = this.options;
    this.lastFlushMs = clock.now();
    const inline = encodeBatch(messages);
    if (inline.length <= member.maxBroadcastBytes / 2) member.broadcast(inline);
    else member.broadcast(encodePull(this.outbox.session, [this.outbox.add(messages, clock.now())]));
  }

  private schedulePull(origin: string, session: string, seqs: readonly number[]): void {
    if (origin === this.options.member.localMember.name || seqs.length === 0) return;
    let pull = this.pulls.get(origin);
    if (pull === undefined || pull.session !== session) {
      pull = { session, seqs: new Set(), running: false, attempts: 0 };
      this.pulls.set(origin, pull);
    }
    for (const seq of seqs) pull.seqs.add(seq);
    if (!pull.running) void this.runPull(origin, pull);
  }

  /** Fetches the announced batches from their origin, one request at a time per origin. */
  private async runPull(origin: string, pull: PendingPull): Promise<void> {
    pull.running = true;
    while (pull.seqs.size > 0 && !this.stopped) {
      const seqs = [...pull.seqs].slice(0, MAX_PULL_SEQS);
      let messages: InvalidationMessage[] | undefined;
      try {
        const answer = await this.options.member.request(origin, PULL_CHANNEL, encodePull(pull.session, seqs), { timeoutMs: this.httpTimeoutMs });
        messages = decodeBatch(answer);
      } catch {
        messages = undefined;
      }
      if (messages === undefined) {
        pull.attempts += 1;
        if (pull.attempts >= PULL_ATTEMPTS) {
          // The origin is gone or forgot the batch: a peer's log has it, catch-up asks one.
          this.pulls.delete(origin);
          this.options.onPullFailed?.();
          return;
        }
        pull.running = false;
        this.retryLater(origin, pull);
        return;
      }
      for (const seq of seqs) pull.seqs.delete(seq);
      pull.attempts = 0;
      await Promise.all(messages.map((message) => this.receive(message, 'gossip'))).catch((error: unknown) => this.options.onError?.(error));
    }
    pull.running = false;
    if (pull.seqs.size === 0 && this.pulls.get(origin) === pull) this.pulls.delete(origin);
  }

  private retryLater(origin: string, pull: PendingPull): void {
    const timer = this.options.clock.setTimer(PULL_RETRY_MS, () => {
      this.timers.delete(timer);
      if (!pull.running && !this.stopped && this.pulls.get(origin) === pull) void this.runPull(origin, pull);
    });
    this.timers.add(timer);
  }
}
