// A member of a cluster: the membership protocol, the ownership ring, user broadcasts, user requests
// and fan-out behind one object with a start/stop lifecycle.
import type { Clock } from './clock.js';
import type { Random } from './random.js';
import type { Address, RequestHandler, RequestOptions, Transport } from './transport.js';
import type { Metadata } from './codec/messages.js';
import { ByteWriter, stringBytes } from './codec/bytes.js';
import { writeMetadata } from './codec/message-codec.js';
import { ReservedChannelError, MetadataTooLargeError, UnknownMemberError } from './errors.js';
import { TypedEmitter } from './events.js';
import type { Listener } from './events.js';
import { fanOut } from './fanout.js';
import type { FanOutOptions, FanOutResult } from './fanout.js';
import { resolveMembershipConfig } from './membership/config.js';
import type { MembershipConfig } from './membership/config.js';
import { Membership } from './membership/membership.js';
import type { MembershipCounters, MembershipEvents, PushPullDelegate } from './membership/membership.js';
import type { MemberInfo } from './membership/member-record.js';
import { OwnershipRing, DEFAULT_RING_VNODES } from './ring/ownership-ring.js';
import type { RingView } from './ring/ownership-ring.js';
import { createRandom, randomSeed } from './seeded-random.js';
import { systemClock } from './system-clock.js';

/** Longest member name, in UTF-8 bytes; names travel in every probe. */
export const MAX_NAME_BYTES = 128;

/** How long `leave` waits for its announcement to spread when not told otherwise. */
export const DEFAULT_LEAVE_TIMEOUT_MS = 5000;

/**
 * The protocol's own channels live under this prefix (`swim/push-pull`…); user channels may take any
 * other name, and keep it on the wire, so a transport can serve them under names a consumer chose
 * (svc's `/v1/peer/purge`).
 */
const PROTOCOL_CHANNEL_PREFIX = 'swim/';

function userChannel(channel: string): string {
  if (channel.startsWith(PROTOCOL_CHANNEL_PREFIX) || channel.length === 0) throw new ReservedChannelError(channel);
  return channel;
}

export interface ClusterEvents extends MembershipEvents {
  /** The live member set changed; the ring has a new version. */
  ring: { readonly version: number };
}

export interface ClusterMemberOptions {
  /** Unique, stable name of this member in the cluster. */
  readonly name: string;
  readonly transport: Transport;
  /** Defaults to the real clock. */
  readonly clock?: Clock;
  /** Defaults to a generator seeded from the operating system. */
  readonly random?: Random;
  readonly metadata?: Metadata;
  readonly config?: Partial<MembershipConfig>;
  /** Virtual nodes per member on the ownership ring; defaults to 40. */
  readonly ringVnodes?: number;
  /** Receives errors thrown by event listeners, broadcast handlers and the delegate (they never break the protocol). */
  readonly onListenerError?: (error: unknown) => void;
  /**
   * The consumer's own state, carried by every push-pull (on join, periodically, on reconnect): e.g. svc's
   * active bans and recent invalidations. memberlist's Delegate LocalState/MergeRemoteState.
   */
  readonly delegate?: PushPullDelegate;
  /**
   * Which live members own keys on the ring, by their metadata (e.g. only those of one role or mode);
   * every live member when absent. Called again whenever a member's metadata changes.
   */
  readonly ringMembers?: (member: MemberInfo) => boolean;
}

export interface ClusterCounters extends MembershipCounters {
  /** Gossip messages dropped because a queue was full (svc_cluster_gossip_drops_total). */
  gossipDrops: number;
  queuedBroadcasts: number;
  /** Lifeguard local health score, 0 (healthy) to awarenessMaxMultiplier - 1. */
  healthScore: number;
  listenerErrors: number;
  tombstones: number;
}

export type BroadcastHandler = (payload: Uint8Array, origin: string) => void;

function encodedMetadataBytes(metadata: Metadata): number {
  const writer = new ByteWriter(64);
  writeMetadata(writer, metadata);
  return writer.position;
}

function checkMetadata(metadata: Metadata, maxBytes: number): Metadata {
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') throw new TypeError(`metadata value of ${key} must be a string`);
    if (key === '__proto__') throw new TypeError('metadata key __proto__ is reserved');
  }
  const bytes = encodedMetadataBytes(metadata);
  if (bytes > maxBytes) throw new MetadataTooLargeError(bytes, maxBytes);
  return Object.freeze({ ...metadata });
}

export class ClusterMember {
  readonly name: string;
  readonly config: MembershipConfig;
  private readonly transport: Transport;
  private readonly membership: Membership;
  private readonly ownership: OwnershipRing;
  private readonly emitter: TypedEmitter<ClusterEvents>;
  private readonly broadcastHandlers: BroadcastHandler[] = [];
  private listenerErrors = 0;

  constructor(options: ClusterMemberOptions) {
    if (typeof options.name !== 'string' || options.name.length === 0) {
      throw new TypeError('a cluster member needs a non-empty name');
    }
    if (stringBytes(options.name) > MAX_NAME_BYTES + 2) {
      throw new RangeError(`member name is longer than ${MAX_NAME_BYTES} bytes`);
    }
    this.name = options.name;
    this.config = resolveMembershipConfig(options.config);
    this.transport = options.transport;
    const metadata = checkMetadata(options.metadata ?? {}, this.config.maxMetadataBytes);
    const random = options.random ?? createRandom(randomSeed());
    const reportError = (error: unknown): void => {
      this.listenerErrors++;
      options.onListenerError?.(error);
    };
    this.emitter = new TypedEmitter<ClusterEvents>(reportError);
    const ringMembers = options.ringMembers;
    this.ownership = new OwnershipRing(
      ringMembers === undefined ? () => this.membership.liveNames() : () => this.liveNamesWhere(ringMembers),
      options.ringVnodes ?? DEFAULT_RING_VNODES,
    );
    this.membership = new Membership({
      name: options.name,
      transport: options.transport,
      clock: options.clock ?? systemClock,
      random: random.fork('membership'),
      config: this.config,
      metadata,
      events: this.emitter,
      delegate: options.delegate,
      onDelegateError: reportError,
      onLiveSetChanged: () => this.ringChanged(),
      onUserBroadcast: (origin, payload) => {
        for (const handler of [...this.broadcastHandlers]) {
          try {
            handler(payload, origin);
          } catch (error) {
            reportError(error);
          }
        }
      },
    });
    // Who owns keys may depend on metadata: a change of it is a change of the ring.
    if (ringMembers !== undefined) this.emitter.on('update', () => this.ringChanged());
  }

  private ringChanged(): void {
    this.ownership.markChanged();
    if (this.emitter.has('ring')) this.emitter.emit('ring', { version: this.ownership.version });
  }

  private liveNamesWhere(accept: (member: MemberInfo) => boolean): string[] {
    const names: string[] = [];
    for (const record of this.membership.records()) if (record.isLive && accept(record.snapshot())) names.push(record.name);
    return names;
  }

  /** Starts the transport, then probing, gossip and periodic push-pull. */
  async start(): Promise<void> {
    if (this.membership.isRunning) return;
    await this.transport.start();
    this.membership.start();
  }

  /**
   * Joins the cluster through `seeds` (transport addresses; our own is skipped), resolving with how many
   * answered. While none answers it retries with back-off until `signal` aborts (JoinAbortedError).
   * `onUnanswered` hears of each round no seed answered, with its number (1 for the first): a member
   * whose seeds are not up yet may act as a cluster of one meanwhile.
   */
  join(seeds: readonly Address[], options: { signal?: AbortSignal; onUnanswered?: (round: number) => void } = {}): Promise<number> {
    return this.membership.join(seeds, options.signal, options.onUnanswered);
  }

  /** Announces a graceful leave and waits (at most `timeoutMs`) for it to spread. Call `stop` after. */
  leave(options: { timeoutMs?: number } = {}): Promise<void> {
    return this.membership.leave(options.timeoutMs ?? DEFAULT_LEAVE_TIMEOUT_MS);
  }

  /** Stops every timer and the transport. */
  async stop(): Promise<void> {
    this.membership.stop();
    await this.transport.stop();
  }

  get localMember(): MemberInfo {
    return this.membership.self.snapshot();
  }

  /** Every member in the table, self included: alive, suspect, and dead or left ones not yet reaped. */
  members(): MemberInfo[] {
    const out: MemberInfo[] = [];
    for (const record of this.membership.records()) out.push(record.snapshot());
    return out;
  }

  /** Alive and suspect members other than self: the ones requests and fan-out go to. */
  peers(): MemberInfo[] {
    const out: MemberInfo[] = [];
    for (const record of this.membership.records()) {
      if (record.isLive && record !== this.membership.self) out.push(record.snapshot());
    }
    return out;
  }

  member(name: string): MemberInfo | undefined {
    return this.membership.member(name)?.snapshot();
  }

  /**
   * The last known view, self excluded: every member that has not left, live or failed (a failed member
   * is remembered for reconnectTimeoutMs). A majority, a lease, "every member" are counted against it.
   */
  view(): string[] {
    return this.membership.viewNames();
  }

  /** Publishes new metadata (bounded by config.maxMetadataBytes) with a bumped incarnation. */
  setMetadata(metadata: Metadata): void {
    this.membership.setMetadata(checkMetadata(metadata, this.config.maxMetadataBytes));
  }

  /** Membership checksum: equal on every member once they agree on the member table. */
  checksum(): number {
    return this.membership.checksum();
  }

  get ring(): RingView {
    return this.ownership;
  }

  /** Largest payload `broadcast` takes (it must fit one packet with the message's header). */
  get maxBroadcastBytes(): number {
    return this.membership.maxBroadcastBytes;
  }

  /** Sends `payload` to every member through the gossip queue (at-most-once delivery per member). */
  broadcast(payload: Uint8Array): void {
    this.membership.broadcast(payload);
  }

  onBroadcast(handler: BroadcastHandler): () => void {
    this.broadcastHandlers.push(handler);
    return () => {
      const at = this.broadcastHandlers.indexOf(handler);
      if (at >= 0) this.broadcastHandlers.splice(at, 1);
    };
  }

  on<K extends keyof ClusterEvents>(event: K, listener: Listener<ClusterEvents[K]>): () => void {
    return this.emitter.on(event, listener);
  }

  /** Serves requests other members send on `channel` (reliable path). */
  handleRequest(channel: string, handler: RequestHandler): void {
    this.transport.onRequest(userChannel(channel), handler);
  }

  /** Sends one request to a member (by name or snapshot) on `channel`. */
  request(member: string | MemberInfo, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    const address = typeof member === 'string' ? this.membership.member(member)?.address : member.address;
    if (address === undefined) return Promise.reject(new UnknownMemberError(member as string));
    return this.transport.request(address, userChannel(channel), body, options);
  }

  /** Sends `body` on `channel` to every live peer concurrently; one result per peer. */
  fanOut(channel: string, body: Uint8Array, options: FanOutOptions): Promise<FanOutResult[]> {
    return fanOut(this.transport, this.peers(), userChannel(channel), body, options);
  }

  counters(): ClusterCounters {
    return {
      ...this.membership.counters,
      gossipDrops: this.membership.gossipDrops,
      queuedBroadcasts: this.membership.queuedBroadcasts,
      healthScore: this.membership.healthScore,
      listenerErrors: this.listenerErrors,
      tombstones: this.membership.tombstoneCount,
    };
  }
}

export function createClusterMember(options: ClusterMemberOptions): ClusterMember {
  return new ClusterMember(options);
}
