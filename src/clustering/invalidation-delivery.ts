// How an invalidation reaches the other nodes (spec §1.4, §6.1), built from the cluster library's
// primitives only, so the svc node and the simulator run this same code:
//   strong:   purge and ban go by HTTP fan-out to every live peer AND by gossip (dual path); refresh
//             goes by HTTP POST to the key's owner, with gossip as the fallback when that fails;
//   eventual: everything goes by gossip only.
// A node applies each invalidation once, by id, whichever path brings it first.
// Recent invalidations also travel with push-pull anti-entropy (state()/merge()), so a node that was
// partitioned away or down when one happened applies it as soon as it is back (issue 7 item 4).
import type { FanOutOptions, FanOutResult, RequestHandler, RequestOptions } from '../../cluster/index.js';
import { decodeInvalidation, encodeInvalidation, type InvalidationKind, type InvalidationMessage } from './invalidation-message.js';
import { SeenIds } from './seen-ids.js';

export type ClusterMode = 'strong' | 'eventual';
export type DeliveryPath = 'local' | 'http' | 'gossip';

/** What delivery needs of a cluster member (the library's ClusterMember has it all). */
export interface DeliveryMember {
  readonly localMember: { readonly name: string };
  readonly ring: { owner(key: string): string | undefined };
  fanOut(channel: string, body: Uint8Array, options: FanOutOptions): Promise<FanOutResult[]>;
  request(member: string, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  broadcast(payload: Uint8Array): void;
  onBroadcast(handler: (payload: Uint8Array, origin: string) => void): () => void;
  handleRequest(channel: string, handler: RequestHandler): void;
}

/** Counts what delivery does, for the spec §6.5 cluster metrics. */
export interface DeliveryCounters {
  /** One invalidation sent by HTTP (a fan-out, or a POST to the owner). */
  http(type: InvalidationKind): void;
  /** One invalidation sent by gossip. */
  gossip(type: InvalidationKind): void;
  /** One peer the HTTP path did not reach; `reason` is the fan-out outcome (timeout, refused, error). */
  failure(type: InvalidationKind, reason: string): void;
}

export interface DeliveryOptions {
  member: DeliveryMember;
  mode: ClusterMode;
  /** Applies an invalidation on this node. */
  apply: (message: InvalidationMessage, path: DeliveryPath) => Promise<void> | void;
  /** The ring key of a URL (refresh goes to the owner of this key). */
  keyOf: (url: string) => string;
  counters: DeliveryCounters;
  /** Fresh ids for locally originated invalidations. */
  newId: () => string;
  /** Per-peer bound of the HTTP paths. 1 s: the spec's promise for a strong purge to reach all. */
  httpTimeoutMs?: number;
  /** Remembered ids. 10,000 outlives a burst of batch purges while gossip still carries them. */
  seenCapacity?: number;
  onError?: (error: unknown) => void;
  /** Wall clock for the anti-entropy log's age bound. */
  now?: () => number;
  /** Invalidations kept for anti-entropy. 1,000 covers the bursts an operator makes, and bounds the
   * push-pull payload to some 100 KiB. */
  logCapacity?: number;
  /** How long one is kept: 24 h, the retention of a ban (spec §1.1). */
  logMaxAgeMs?: number;
}

const DEFAULT_LOG_CAPACITY = 1_000;
const DEFAULT_LOG_MAX_AGE_MS = 24 * 60 * 60 * 1000;
const STATE_VERSION = 1;

/** Channels of the HTTP path; the UDP transport serves them as `/v1/peer/<channel>` (spec §4.1). */
export const INVALIDATION_CHANNELS = { purge: 'purge', ban: 'ban', refresh: 'refresh' } as const;

const DEFAULT_HTTP_TIMEOUT_MS = 1_000;
const DEFAULT_SEEN_CAPACITY = 10_000;
const OK = new Uint8Array([1]);

function channelOf(type: InvalidationKind): string {
  if (type === 'ban') return INVALIDATION_CHANNELS.ban;
  if (type === 'refresh') return INVALIDATION_CHANNELS.refresh;
  return INVALIDATION_CHANNELS.purge;
}

export interface PublishReport {
  /** Peers the HTTP path reached (strong mode), or 0. */
  reached: number;
  /** Peers the HTTP path did not reach; gossip still carries the invalidation to them. */
  missed: number;
}

export class InvalidationDelivery {
  private readonly seen: SeenIds;
  private readonly httpTimeoutMs: number;
  private unsubscribe: (() => void) | undefined;
  /** Recent invalidations, oldest first, for anti-entropy. */
  private readonly log: { message: InvalidationMessage; atMs: number }[] = [];

  constructor(private readonly options: DeliveryOptions) {
    this.seen = new SeenIds(options.seenCapacity ?? DEFAULT_SEEN_CAPACITY);
    this.httpTimeoutMs = options.httpTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  }

  /** This node's recent invalidations, as push-pull state (the cluster library's delegate). */
  state(): Uint8Array {
    this.trimLog();
    return new TextEncoder().encode(JSON.stringify({ v: STATE_VERSION, messages: this.log.map((item) => item.message) }));
  }

  /** A peer's recent invalidations: applies those this node has not seen. */
  merge(state: Uint8Array): void {
    let parsed: { v?: unknown; messages?: unknown };
    try {
      parsed = JSON.parse(new TextDecoder().decode(state)) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.v !== STATE_VERSION || !Array.isArray(parsed.messages)) return;
    for (const item of parsed.messages) {
      let message: InvalidationMessage;
      try {
        message = decodeInvalidation(encodeInvalidation(item as InvalidationMessage));
      } catch {
        continue;
      }
      this.receive(message, 'gossip').catch((error: unknown) => this.options.onError?.(error));
    }
  }

  private remember(message: InvalidationMessage): void {
    this.log.push({ message, atMs: (this.options.now ?? Date.now)() });
    this.trimLog();
  }

  private trimLog(): void {
    const capacity = this.options.logCapacity ?? DEFAULT_LOG_CAPACITY;
    const oldestMs = (this.options.now ?? Date.now)() - (this.options.logMaxAgeMs ?? DEFAULT_LOG_MAX_AGE_MS);
    let drop = Math.max(0, this.log.length - capacity);
    while (drop < this.log.length && this.log[drop]!.atMs < oldestMs) drop++;
    if (drop > 0) this.log.splice(0, drop);
  }

  /** Registers the HTTP handlers and the gossip subscription. */
  start(): void {
    const { member } = this.options;
    const receive: RequestHandler = async (_from, body) => {
      await this.receive(decodeInvalidation(body), 'http');
      return OK;
    };
    for (const channel of Object.values(INVALIDATION_CHANNELS)) member.handleRequest(channel, receive);
    this.unsubscribe = member.onBroadcast((payload) => {
      let message: InvalidationMessage;
      try {
        message = decodeInvalidation(payload);
      } catch {
        return; // Not an invalidation: another consumer's broadcast.
      }
      this.receive(message, 'gossip').catch((error: unknown) => this.options.onError?.(error));
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /**
   * Sends an invalidation this node originated (and already applied) to the others. Resolves once the
   * HTTP path is done (strong) or the message is queued for gossip (eventual).
   */
  async publish(message: InvalidationMessage): Promise<PublishReport> {
    this.seen.add(message.id);
    this.remember(message);
    const { member, mode, counters } = this.options;
    const body = encodeInvalidation(message);
    if (mode === 'eventual') {
      this.gossip(message, body);
      return { reached: 0, missed: 0 };
    }
    if (message.type === 'refresh') return this.sendToOwner(message, body);
    counters.http(message.type);
    const results = await member.fanOut(channelOf(message.type), body, { timeoutMs: this.httpTimeoutMs });
    const missed = results.filter((result) => result.outcome !== 'ok');
    for (const result of missed) counters.failure(message.type, result.outcome);
    // Dual path: gossip goes out whatever the fan-out did, so a peer the fan-out missed still learns.
    this.gossip(message, body);
    return { reached: results.length - missed.length, missed: missed.length };
  }

  /** Strong refresh: only the owner keeps the entry, so only the owner needs to hear of it. */
  private async sendToOwner(message: InvalidationMessage & { type: 'refresh' }, body: Uint8Array): Promise<PublishReport> {
    const { member, counters, keyOf } = this.options;
    const owner = member.ring.owner(keyOf(message.url));
    if (owner === undefined || owner === member.localMember.name) return { reached: 0, missed: 0 };
    counters.http('refresh');
    try {
      await member.request(owner, INVALIDATION_CHANNELS.refresh, body, { timeoutMs: this.httpTimeoutMs });
      return { reached: 1, missed: 0 };
    } catch (error) {
      counters.failure('refresh', (error as { code?: string }).code ?? 'error');
      this.gossip(message, body);
      return { reached: 0, missed: 1 };
    }
  }

  private gossip(message: InvalidationMessage, body: Uint8Array): void {
    this.options.counters.gossip(message.type);
    this.options.member.broadcast(body);
  }

  private async receive(message: InvalidationMessage, path: DeliveryPath): Promise<void> {
    if (!this.seen.add(message.id)) return;
    this.remember(message);
    await this.options.apply(message, path);
  }
}
