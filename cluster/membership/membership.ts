// The SWIM failure detector and membership protocol (Das, Gupta, Motivala 2002) with the Lifeguard
// extensions (Dadgar, Phillips, Currey 2017), after hashicorp/memberlist state.go. One Membership runs on
// one Transport, Clock and Random and holds this member's view of the cluster:
//   - probing: one member per (awareness-stretched) probe interval in shuffled round-robin order; a direct
//     ping, then ping-req through `indirectChecks` helpers after the probe timeout; no ack by the end of
//     the interval makes the target suspect;
//   - suspicion: gossiped, refuted by the suspect with a higher incarnation, and turned into death by a
//     Lifeguard timeout that shrinks with independent confirmations;
//   - dissemination: alive/suspect/dead and user broadcasts piggyback on every packet and on gossip rounds;
//   - anti-entropy: push-pull full state sync on join and periodically, on the reliable path;
//   - dead and left members are gossiped to for gossipToTheDeadTimeMs, then reaped into tombstones.
import type { Clock, TimerHandle } from '../clock.js';
import type { Random } from '../random.js';
import type { Address, Transport } from '../transport.js';
import type { EventSink } from '../events.js';
import { BroadcastTooLargeError, ClusterStoppedError, JoinAbortedError } from '../errors.js';
import { knownStringId, stringId } from '../codec/bytes.js';
import { encodeMessage, decodeMessage, decodePacket, PacketBuilder, EMPTY_METADATA } from '../codec/message-codec.js';
import { decodeBroadcastBatch, decodePushPull, encodeBroadcastBatch, encodePushPull } from '../codec/push-pull-codec.js';
import { asMalformedRequest } from '../codec/errors.js';
import type {
  AliveMessage,
  ClusterMessage,
  DeadMessage,
  Metadata,
  PingReqMessage,
  PushPullState,
  StateEntry,
  SuspectMessage,
  UserMessage,
} from '../codec/messages.js';
import { PiggybackQueues } from '../gossip/piggyback-queues.js';
import { SeenBroadcasts } from '../gossip/seen-broadcasts.js';
import { RecentBroadcasts } from '../gossip/recent-broadcasts.js';
import { retransmitLimit } from '../math/retransmit-limit.js';
import {
  expectedSuspicionConfirmations,
  maxSuspicionTimeoutMs,
  minSuspicionTimeoutMs,
} from '../math/suspicion-timeout.js';
import { nextAwarenessScore, scaleByAwareness } from '../math/awareness.js';
import { scaledPushPullIntervalMs } from '../math/push-pull-scale.js';
import { membershipChecksum } from '../math/membership-checksum.js';
import type { MembershipConfig } from './config.js';
import { MemberRecord, sameMetadata } from './member-record.js';
import type { MemberInfo } from './member-record.js';
import { Suspicion } from './suspicion.js';
import { Tombstones } from './tombstones.js';
import { FailedMembers } from './failed-members.js';

/** The reliable-path channel push-pull state sync uses. */
export const PUSH_PULL_CHANNEL = 'swim/push-pull';
/** The reliable-path channel of push-pull's last leg: the user broadcasts the answering side lacked. */
export const BROADCASTS_CHANNEL = 'swim/broadcasts';

/**
 * A consumer's own state carried by every push-pull, after memberlist's Delegate LocalState and
 * MergeRemoteState: e.g. svc's active bans and recent invalidations, so a member that missed them (or
 * just joined) catches up. The bytes are opaque to the library.
 */
export interface PushPullDelegate {
  /** This member's state to send; `join` is true on a push-pull made to join. */
  pushPullState(join: boolean): Uint8Array;
  /** A peer's state, as its `pushPullState` returned it. Errors are reported, never thrown into the protocol. */
  mergeRemoteState(state: Uint8Array, join: boolean): void;
}

export interface MembershipEvents {
  join: MemberInfo;
  leave: MemberInfo;
  fail: MemberInfo;
  suspect: MemberInfo;
  update: MemberInfo;
  /** Another member suspected this one, or declared it dead: it refuted, but may have missed what others did meanwhile. */
  accused: { readonly state: 'suspect' | 'dead'; readonly incarnation: number };
}

export interface MembershipCounters {
  packetsSent: number;
  packetsReceived: number;
  bytesSent: number;
  bytesReceived: number;
  /** Packets or push-pull states that failed to decode and were dropped. */
  malformedInputs: number;
  probes: number;
  failedProbes: number;
  refutations: number;
  pushPulls: number;
  pushPullFailures: number;
  userBroadcastsSent: number;
  userBroadcastsDelivered: number;
  /** User broadcasts that arrived through push-pull anti-entropy rather than gossip. */
  userBroadcastsRecovered: number;
}

export interface MembershipOptions {
  readonly name: string;
  readonly transport: Transport;
  readonly clock: Clock;
  readonly random: Random;
  readonly config: MembershipConfig;
  readonly metadata: Metadata;
  readonly events: EventSink<MembershipEvents>;
  /** Called when the set of live members (alive or suspect) changes, for the ring. */
  readonly onLiveSetChanged: () => void;
  readonly onUserBroadcast: (origin: string, payload: Uint8Array) => void;
  readonly delegate?: PushPullDelegate;
  /** Receives errors thrown by the delegate. */
  readonly onDelegateError?: (error: unknown) => void;
}

const EMPTY_BYTES = new Uint8Array(0);

/**
 * Refutations (our own, and alive messages that clear a suspicion we held) are sent this many times the
 * usual retransmit limit. A refutation races the suspicion's timeout on every member: one member that
 * misses it declares a healthy member dead (the false positive Lifeguard exists to avoid), while an
 * ordinary gossip message that is missed only arrives a little later through push-pull.
 */
const REFUTATION_TRANSMIT_SCALE = 3;

/**
 * User broadcasts are sent this many times the usual retransmit limit. Each packet spends one
 * transmission per target, so at the usual limit (4 below 10 members) a broadcast is spent after
 * about one gossip round, and the simulator found members that no round reached: they then learned
 * of it only by push-pull, tens of seconds later. Consumers use broadcasts for what must arrive in
 * seconds (svc's eventual-mode purges, spec §1.4: 1-5 s); they are few beside membership gossip, so
 * the extra sends cost little.
 */
const USER_BROADCAST_TRANSMIT_SCALE = 3;

/** A probe of ours waiting for an ack (direct or relayed by a ping-req helper). */
class PendingProbe {
  acked = false;
  nacks = 0;
  expectedNacks = 0;
  timeoutTimer: TimerHandle | undefined = undefined;
  deadlineTimer: TimerHandle | undefined = undefined;

  constructor(
    readonly target: MemberRecord,
    readonly incarnation: number,
  ) {}
}

/** A ping we send on another member's behalf (ping-req); its ack is relayed back under their seq. */
class PendingRelay {
  timer: TimerHandle | undefined = undefined;

  constructor(
    readonly requester: Address,
    readonly requesterSeq: number,
  ) {}
}

interface DeathRecord {
  readonly member: MemberRecord;
  readonly atMs: number;
}

export class Membership {
  private readonly members = new Map<string, MemberRecord>();
  /** The same records indexed by the stringId of their name: lookups by name (see record, isStaleAlive). */
  private readonly membersById: (MemberRecord | undefined)[] = [];
  /** Every member in the table (self included), in this round's probe order. */
  private readonly probeOrder: MemberRecord[] = [];
  private probeIndex = 0;
  readonly self: MemberRecord;
  private readonly tombstones = new Tombstones();
  /** Dead and left members in the order they died, for reaping from the front. */
  private deaths: DeathRecord[] = [];
  private deathsHead = 0;
  private liveCount = 1;
  private seq = 0;
  private userSeq: number;
  private readonly pending = new Map<number, PendingProbe | PendingRelay>();
  private awarenessScore = 0;
  private running = false;
  private leaving = false;
  private probeTimer: TimerHandle | undefined;
  private gossipTimer: TimerHandle | undefined;
  private pushPullTimer: TimerHandle | undefined;
  private reconnectTimer: TimerHandle | undefined;
  private readonly failed: FailedMembers;
  private readonly recentBroadcasts: RecentBroadcasts;
  /** The seeds of the last join, retried by the reconnect loop while no other member is live. */
  private seeds: readonly Address[] = [];
  private readonly waits = new Set<{ timer: TimerHandle; cancel: () => void }>();
  private readonly queues: PiggybackQueues;
  private readonly seenBroadcasts: SeenBroadcasts;
  private readonly packet: PacketBuilder;
  private readonly piggyback: Uint8Array[] = [];
  private cachedLimit = -1;
  private cachedLimitCount = -1;
  private checksumCache: number | undefined;
  private readonly config: MembershipConfig;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly transport: Transport;
  private readonly events: EventSink<MembershipEvents>;
  readonly counters: MembershipCounters = {
    packetsSent: 0,
    packetsReceived: 0,
    bytesSent: 0,
    bytesReceived: 0,
    malformedInputs: 0,
    probes: 0,
    failedProbes: 0,
    refutations: 0,
    pushPulls: 0,
    pushPullFailures: 0,
    userBroadcastsSent: 0,
    userBroadcastsDelivered: 0,
    userBroadcastsRecovered: 0,
  };

  constructor(private readonly options: MembershipOptions) {
    this.config = options.config;
    this.clock = options.clock;
    this.random = options.random;
    this.transport = options.transport;
    this.events = options.events;
    this.self = new MemberRecord(options.name, '', 0, options.metadata, 'alive', this.clock.now());
    this.addRecord(this.self);
    this.probeOrder.push(this.self);
    // A random start keeps broadcast ids unique across restarts of a member with the same name.
    this.userSeq = this.random.int(2 ** 31) * 2 ** 20;
    this.queues = new PiggybackQueues({
      membershipMaxLength: this.config.membershipQueueMaxLength,
      userMaxLength: this.config.userQueueMaxLength,
      userShare: this.config.userBroadcastShare,
      transmitLimit: () => this.transmitLimit(),
      userTransmitLimit: () => this.transmitLimit() * USER_BROADCAST_TRANSMIT_SCALE,
    });
    this.seenBroadcasts = new SeenBroadcasts(this.config.seenBroadcastsMax);
    this.recentBroadcasts = new RecentBroadcasts(this.config.userBroadcastRetentionMax, this.config.userBroadcastRetentionMs);
    this.failed = new FailedMembers(this.config.reconnectMaxMembers, this.config.reconnectTimeoutMs);
    this.packet = new PacketBuilder(this.transport.maxPacketBytes);
    this.transport.onPacket((from, data) => this.handlePacket(from, data));
    this.transport.onRequest(PUSH_PULL_CHANNEL, (_from, body) => this.handlePushPull(body));
    this.transport.onRequest(BROADCASTS_CHANNEL, (_from, body) => this.handleBroadcastBatch(body));
  }

  // ---- lifecycle ----

  /** Starts probing, gossip and periodic push-pull; the transport must already be started. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.self.address = this.transport.localAddress;
    this.self.stateChangedAtMs = this.clock.now();
    this.checksumCache = undefined;
    // Random first delays (memberlist staggers the same way) keep members started together out of step.
    this.probeTimer = this.clock.setTimer(this.random.int(this.config.probeIntervalMs), () => this.probeTick());
    this.gossipTimer = this.clock.setTimer(this.random.int(this.config.gossipIntervalMs), () => this.gossipTick());
    this.pushPullTimer = this.clock.setTimer(this.random.int(this.config.pushPullIntervalMs), () =>
      this.pushPullTick(),
    );
    this.reconnectTimer = this.clock.setTimer(this.random.int(this.config.reconnectIntervalMs), () =>
      this.reconnectTick(),
    );
    // Announce ourselves to whoever we gossip with first, as memberlist's setAlive does.
    this.broadcastMembership(this.self.name, this.selfAlive());
  }

  /** Stops every timer and drops pending work; the transport is left to its owner. */
  stop(): void {
    if (!this.running) return;
    this.running = false;
    for (const timer of [this.probeTimer, this.gossipTimer, this.pushPullTimer, this.reconnectTimer]) {
      if (timer !== undefined) this.clock.clearTimer(timer);
    }
    this.probeTimer = this.gossipTimer = this.pushPullTimer = this.reconnectTimer = undefined;
    for (const entry of this.pending.values()) this.clearPending(entry);
    this.pending.clear();
    for (const member of this.members.values()) {
      member.suspicion?.cancel();
      member.suspicion = undefined;
    }
    for (const wait of [...this.waits]) wait.cancel();
    this.queues.clear();
  }

  get isRunning(): boolean {
    return this.running;
  }

  // ---- queries ----

  get healthScore(): number {
    return this.awarenessScore;
  }

  get queuedBroadcasts(): number {
    return this.queues.length;
  }

  get gossipDrops(): number {
    return this.queues.drops;
  }

  get tombstoneCount(): number {
    return this.tombstones.size;
  }

  member(name: string): MemberRecord | undefined {
    return this.members.get(name);
  }

  records(): IterableIterator<MemberRecord> {
    return this.members.values();
  }

  /**
   * Every member that has not left, self excluded: live ones, dead ones still in the table, and dead ones
   * reaped but still remembered for reconnect (reconnectTimeoutMs). What a majority is counted against:
   * a member that failed may be on the other side of a partition, not gone.
   */
  viewNames(): string[] {
    this.failed.expire(this.clock.now());
    const names = new Set<string>();
    for (const member of this.members.values()) if (member !== this.self && member.state !== 'left') names.add(member.name);
    for (const name of this.failed.names()) names.add(name);
    return [...names];
  }

  liveNames(): string[] {
    const names: string[] = [];
    for (const member of this.members.values()) if (member.isLive) names.push(member.name);
    return names;
  }

  /** Checksum of the member table (see math/membership-checksum.ts), cached until the table changes. */
  checksum(): number {
    this.checksumCache ??= membershipChecksum(this.members.values());
    return this.checksumCache;
  }

  private transmitLimit(): number {
    if (this.cachedLimitCount !== this.liveCount) {
      this.cachedLimitCount = this.liveCount;
      this.cachedLimit = retransmitLimit(this.config.retransmitMult, this.liveCount);
    }
    return this.cachedLimit;
  }

  private scaled(timeoutMs: number): number {
    return this.config.lifeguard ? scaleByAwareness(timeoutMs, this.awarenessScore) : timeoutMs;
  }

  private applyAwareness(delta: number): void {
    if (!this.config.lifeguard) return;
    this.awarenessScore = nextAwarenessScore(this.awarenessScore, delta, this.config.awarenessMaxMultiplier);
  }

  // ---- sending ----

  /** Sends one packet: up to two protocol messages first, then as much piggybacked gossip as fits. */
  private send(to: Address, first: Uint8Array | undefined, second?: Uint8Array): boolean {
    const packet = this.packet;
    packet.begin();
    if (first !== undefined) packet.add(first);
    if (second !== undefined) packet.add(second);
    const piggyback = this.piggyback;
    this.queues.fill(packet.remainingBytes, piggyback);
    for (const message of piggyback) packet.add(message);
    const hadGossip = piggyback.length > 0;
    piggyback.length = 0;
    if (first === undefined && !hadGossip) return false;
    const data = packet.finish();
    this.counters.packetsSent++;
    this.counters.bytesSent += data.length;
    this.transport.sendPacket(to, data);
    return true;
  }

  private broadcastMembership(name: string, message: ClusterMessage, onDone?: () => void, transmitScale = 1): void {
    this.queues.membership.enqueue(encodeMessage(message), name, onDone, transmitScale);
  }

  // ---- probing ----

  private probeTick(): void {
    this.probeTimer = undefined;
    if (!this.running) return;
    const now = this.clock.now();
    this.reapDead(now);
    this.tombstones.expire(now);
    const intervalMs = this.scaled(this.config.probeIntervalMs);
    const target = this.nextProbeTarget();
    if (target !== undefined) this.probe(target, intervalMs);
    this.probeTimer = this.clock.setTimer(intervalMs, this.onProbeTick);
  }

  /** The next live member in round-robin order; the order is reshuffled each time it wraps (SWIM 4.3). */
  private nextProbeTarget(): MemberRecord | undefined {
    for (let checked = 0; checked <= this.probeOrder.length; checked++) {
      if (this.probeIndex >= this.probeOrder.length) {
        this.shuffleProbeOrder();
        this.probeIndex = 0;
      }
      const candidate = this.probeOrder[this.probeIndex++] as MemberRecord;
      if (candidate !== this.self && candidate.isLive) return candidate;
    }
    return undefined;
  }

  private shuffleProbeOrder(): void {
    const order = this.probeOrder;
    for (let i = order.length - 1; i > 0; i--) {
      const j = this.random.int(i + 1);
      const swap = order[i] as MemberRecord;
      order[i] = order[j] as MemberRecord;
      order[j] = swap;
    }
  }

  private probe(target: MemberRecord, intervalMs: number): void {
    this.counters.probes++;
    const seq = ++this.seq;
    const probe = new PendingProbe(target, target.incarnation);
    this.pending.set(seq, probe);
    const ping = encodeMessage({ kind: 'ping', seq, target: target.name });
    // The buddy system (Lifeguard IV.C): a suspect hears of its suspicion first-hand on the next probe.
    const buddy =
      target.state === 'suspect'
        ? encodeMessage({ kind: 'suspect', name: target.name, incarnation: target.incarnation, from: this.self.name })
        : undefined;
    this.send(target.address, ping, buddy);
    probe.timeoutTimer = this.clock.setTimer(this.scaled(this.config.probeTimeoutMs), () =>
      this.probeIndirectly(seq, probe),
    );
    probe.deadlineTimer = this.clock.setTimer(intervalMs, () => this.probeDeadline(seq, probe));
  }

  private probeIndirectly(seq: number, probe: PendingProbe): void {
    probe.timeoutTimer = undefined;
    if (probe.acked) return;
    const helpers = this.randomMembers(
      this.config.indirectChecks,
      (m) => m.state === 'alive' && m !== probe.target,
    );
    const request = encodeMessage({
      kind: 'ping-req',
      seq,
      target: probe.target.name,
      targetAddress: probe.target.address,
      wantNack: this.config.lifeguard,
    });
    for (const helper of helpers) this.send(helper.address, request);
    if (this.config.lifeguard) probe.expectedNacks = helpers.length;
  }

  private probeDeadline(seq: number, probe: PendingProbe): void {
    probe.deadlineTimer = undefined;
    this.pending.delete(seq);
    if (probe.acked) return;
    this.counters.failedProbes++;
    // Lifeguard IV.A: missing nacks mean our own network or process is slow, not the target; with no
    // helpers to tell us, any failed probe counts against our health.
    if (probe.expectedNacks > 0) this.applyAwareness(Math.max(0, probe.expectedNacks - probe.nacks));
    else this.applyAwareness(1);
    this.handleSuspect({
      kind: 'suspect',
      name: probe.target.name,
      incarnation: probe.incarnation,
      from: this.self.name,
    });
  }

  private clearPending(entry: PendingProbe | PendingRelay): void {
    if (entry instanceof PendingProbe) {
      if (entry.timeoutTimer !== undefined) this.clock.clearTimer(entry.timeoutTimer);
      if (entry.deadlineTimer !== undefined) this.clock.clearTimer(entry.deadlineTimer);
      entry.timeoutTimer = entry.deadlineTimer = undefined;
    } else if (entry.timer !== undefined) {
      this.clock.clearTimer(entry.timer);
      entry.timer = undefined;
    }
  }

  /**
   * Up to `count` distinct random members other than self that pass `accept`, by random draws from the
   * probe order (at most 3n draws, like memberlist's kRandomNodes): O(count) when most members qualify.
   */
  private randomMembers(count: number, accept: (member: MemberRecord) => boolean): MemberRecord[] {
    const chosen: MemberRecord[] = [];
    const n = this.probeOrder.length;
    for (let draws = 0; draws < 3 * n && chosen.length < count; draws++) {
      const member = this.probeOrder[this.random.int(n)] as MemberRecord;
      if (member === this.self || !accept(member) || chosen.includes(member)) continue;
      chosen.push(member);
    }
    return chosen;
  }

  // ---- gossip and push-pull rounds ----

  private gossipTick(): void {
    this.gossipTimer = undefined;
    if (!this.running) return;
    if (this.queues.length > 0) {
      this.gossipDeadSinceMs = this.clock.now() - this.config.gossipToTheDeadTimeMs;
      const targets = this.randomMembers(this.config.gossipNodes, this.isGossipTarget);
      for (const target of targets) if (!this.send(target.address, undefined)) break;
    }
    this.gossipTimer = this.clock.setTimer(this.config.gossipIntervalMs, this.onGossipTick);
  }

  // Bound once: the gossip and probe rounds run every few hundred milliseconds on every member.
  private readonly onGossipTick = (): void => this.gossipTick();
  private readonly onProbeTick = (): void => this.probeTick();
  /** Members that died at or after this time are still gossiped to (set by each gossip round). */
  private gossipDeadSinceMs = 0;
  /** Gossip goes to live members and to those dead for less than gossipToTheDeadTimeMs. */
  private readonly isGossipTarget = (m: MemberRecord): boolean =>
    m.isLive || (m.state === 'dead' && m.stateChangedAtMs >= this.gossipDeadSinceMs);

  private pushPullTick(): void {
    this.pushPullTimer = undefined;
    if (!this.running) return;
    const [peer] = this.randomMembers(1, (m) => m.state === 'alive');
    if (peer !== undefined) {
      this.pushPull(peer.address).catch(() => {
        // Counted in pushPull; the next period tries another member.
      });
    }
    const intervalMs = scaledPushPullIntervalMs(this.config.pushPullIntervalMs, this.liveCount);
    this.pushPullTimer = this.clock.setTimer(intervalMs, () => this.pushPullTick());
  }

  /**
   * Reconnect (serf `reconnect`): every reconnectIntervalMs, with probability failed / live (at most 1),
   * a push-pull with one random failed member, reaped or not. A member alone in its view retries its
   * join seeds instead. This is what heals a partition: nothing else sends to a member declared dead.
   */
  private reconnectTick(): void {
    this.reconnectTimer = undefined;
    if (!this.running) return;
    this.failed.expire(this.clock.now());
    const others = this.liveCount - 1;
    let address: Address | undefined;
    if (this.failed.size > 0 && this.random.next() * Math.max(1, others) < this.failed.size) {
      address = this.failed.pick(this.random)?.address;
    } else if (others <= 0 && this.seeds.length > 0) {
      address = this.seeds[this.random.int(this.seeds.length)];
    }
    if (address !== undefined && address !== this.self.address) {
      this.pushPull(address).catch(() => {
        // Counted in pushPull; the next round tries again.
      });
    }
    this.reconnectTimer = this.clock.setTimer(this.config.reconnectIntervalMs, () => this.reconnectTick());
  }

  /**
   * One full state exchange with the member at `address`: our table, broadcast digest and delegate state
   * go out; theirs come back with the broadcasts we lacked; a last one-way request sends them the
   * broadcasts their digest lacked.
   */
  async pushPull(address: Address, signal?: AbortSignal, join = false): Promise<void> {
    if (!this.running) throw new ClusterStoppedError('push-pull');
    this.counters.pushPulls++;
    let missing: Uint8Array[];
    try {
      const request = encodePushPull(this.localState(join, []));
      const response = await this.transport.request(address, PUSH_PULL_CHANNEL, request, {
        timeoutMs: this.config.pushPullTimeoutMs,
        signal,
      });
      const remote = this.mergeRemoteState(response);
      missing = remote === undefined ? [] : this.recentBroadcasts.missingFrom(remote.broadcastDigest);
    } catch (error) {
      this.counters.pushPullFailures++;
      throw error;
    }
    if (missing.length > 0 && this.running) {
      this.transport
        .request(address, BROADCASTS_CHANNEL, encodeBroadcastBatch(missing), {
          timeoutMs: this.config.pushPullTimeoutMs,
          signal,
        })
        .catch(() => {
          // The next push-pull with this member offers them again.
        });
    }
  }

  /**
   * Answers a push-pull. The remote state is merged first, so the answer already carries what the
   * merge changed here, above all our refutation when the caller believed us dead: the two sides of a
   * healed partition then recognise each other in one exchange.
   */
  private async handlePushPull(body: Uint8Array): Promise<Uint8Array> {
    if (!this.running) throw new ClusterStoppedError('push-pull');
    let remote: PushPullState | undefined;
    try {
      remote = this.mergeRemoteState(body);
    } catch (error) {
      throw asMalformedRequest(error);
    }
    if (remote === undefined) throw new ClusterStoppedError('push-pull');
    return encodePushPull(this.localState(remote.join, this.recentBroadcasts.missingFrom(remote.broadcastDigest)));
  }

  private async handleBroadcastBatch(body: Uint8Array): Promise<Uint8Array> {
    if (!this.running) throw new ClusterStoppedError('push-pull');
    let messages: Uint8Array[];
    try {
      messages = decodeBroadcastBatch(body);
    } catch (error) {
      this.counters.malformedInputs++;
      throw asMalformedRequest(error);
    }
    this.deliverBroadcasts(messages);
    return EMPTY_BYTES;
  }

  /** User broadcasts received through anti-entropy: delivered and re-gossiped like gossip ones. */
  private deliverBroadcasts(messages: readonly Uint8Array[]): void {
    for (const bytes of messages) {
      if (!this.running) return;
      let message;
      try {
        message = decodeMessage(bytes);
      } catch {
        this.counters.malformedInputs++;
        continue;
      }
      if (message?.kind !== 'user') {
        this.counters.malformedInputs++;
        continue;
      }
      if (this.handleUser(message)) this.counters.userBroadcastsRecovered++;
    }
  }

  private localState(join: boolean, broadcasts: Uint8Array[]): PushPullState {
    const now = this.clock.now();
    const entries: StateEntry[] = [];
    for (const m of this.members.values()) {
      entries.push({
        name: m.name,
        address: m.address,
        state: m.state,
        incarnation: m.incarnation,
        metadata: m.metadata,
        rememberMs: m.isLive ? 0 : m.stateChangedAtMs + this.config.tombstoneTimeMs - now,
      });
    }
    for (const t of this.tombstones.values(now)) {
      if (this.members.has(t.name)) continue;
      entries.push({
        name: t.name,
        address: '',
        state: t.state,
        incarnation: t.incarnation,
        metadata: EMPTY_METADATA,
        rememberMs: t.expiresAtMs - now,
      });
    }
    this.recentBroadcasts.expire(now);
    return {
      join,
      entries,
      broadcastDigest: this.recentBroadcasts.digest(),
      broadcasts,
      userState: this.delegateState(join),
    };
  }

  private delegateState(join: boolean): Uint8Array {
    const delegate = this.options.delegate;
    if (delegate === undefined) return EMPTY_BYTES;
    try {
      return delegate.pushPullState(join);
    } catch (error) {
      this.options.onDelegateError?.(error);
      return EMPTY_BYTES;
    }
  }

  /**
   * Merges a remote push-pull state, after memberlist mergeState, delivers the broadcasts it brought and
   * hands the delegate its part; throws if it does not decode, returns undefined once stopped.
   */
  private mergeRemoteState(data: Uint8Array): PushPullState | undefined {
    let state;
    try {
      state = decodePushPull(data);
    } catch (error) {
      this.counters.malformedInputs++;
      throw error;
    }
    if (!this.running) return undefined;
    this.mergeEntries(state.entries);
    this.deliverBroadcasts(state.broadcasts);
    const delegate = this.options.delegate;
    if (delegate !== undefined && state.userState.length > 0 && this.running) {
      try {
        delegate.mergeRemoteState(state.userState, state.join);
      } catch (error) {
        this.options.onDelegateError?.(error);
      }
    }
    return state;
  }

  private mergeEntries(entries: readonly StateEntry[]): void {
    const now = this.clock.now();
    for (const entry of entries) {
      const known = this.record(entry.name);
      switch (entry.state) {
        case 'alive':
          this.handleAlive({
            kind: 'alive',
            name: entry.name,
            address: entry.address,
            incarnation: entry.incarnation,
            metadata: entry.metadata,
          });
          break;
        case 'left':
          if (known !== undefined) this.handleDead({ kind: 'dead', name: entry.name, incarnation: entry.incarnation, from: entry.name });
          else this.rememberRemoteDeath(entry, now);
          break;
        case 'dead':
        case 'suspect':
          // A remote death is only suspicion here (memberlist does the same): our own probes decide,
          // and a wrongly accused member gets the chance to refute.
          if (known !== undefined) this.handleSuspect({ kind: 'suspect', name: entry.name, incarnation: entry.incarnation, from: this.self.name });
          else if (entry.state === 'dead') this.rememberRemoteDeath(entry, now);
          break;
      }
    }
  }

  private rememberRemoteDeath(entry: StateEntry, now: number): void {
    const rememberMs = Math.min(entry.rememberMs, this.config.tombstoneTimeMs);
    if (rememberMs <= 0) return;
    this.tombstones.record({
      name: entry.name,
      incarnation: entry.incarnation,
      state: entry.state,
      expiresAtMs: now + rememberMs,
    });
  }

  // ---- receiving ----

  /** An alive about a known member (not us) at or below the incarnation we hold: gossip repeating itself. */
  private readonly isStaleAlive = (name: string, nameId: number, incarnation: number): boolean => {
    const member = nameId >= 0 ? this.membersById[nameId] : this.members.get(name);
    return member !== undefined && member !== this.self && incarnation <= member.incarnation;
  };

  private handlePacket(from: Address, data: Uint8Array): void {
    if (!this.running) return;
    this.counters.packetsReceived++;
    this.counters.bytesReceived += data.length;
    let messages: ClusterMessage[];
    try {
      messages = decodePacket(data, this.isStaleAlive);
    } catch {
      this.counters.malformedInputs++;
      return;
    }
    for (const message of messages) {
      if (!this.running) return;
      this.handleMessage(from, message);
    }
  }

  private handleMessage(from: Address, message: ClusterMessage): void {
    switch (message.kind) {
      case 'ping':
        // A ping meant for another name reached a reused address: stay silent so the prober learns.
        if (message.target === this.self.name) this.send(from, encodeMessage({ kind: 'ack', seq: message.seq }));
        return;
      case 'ping-req':
        this.handlePingReq(from, message);
        return;
      case 'ack':
        this.handleAck(message.seq);
        return;
      case 'nack': {
        const entry = this.pending.get(message.seq);
        if (entry instanceof PendingProbe) entry.nacks++;
        return;
      }
      case 'suspect':
        if (message.name === this.self.name) this.answerAccusation(from, 'suspect', message.incarnation);
        this.handleSuspect(message);
        return;
      case 'alive':
        this.handleAlive(message);
        return;
      case 'dead':
        if (message.name === this.self.name) this.answerAccusation(from, 'dead', message.incarnation);
        this.handleDead(message);
        return;
      case 'user':
        this.handleUser(message);
        return;
    }
  }

  private handleAck(seq: number): void {
    const entry = this.pending.get(seq);
    if (entry === undefined) return;
    this.pending.delete(seq);
    this.clearPending(entry);
    if (entry instanceof PendingProbe) {
      entry.acked = true;
      this.applyAwareness(-1);
    } else {
      this.send(entry.requester, encodeMessage({ kind: 'ack', seq: entry.requesterSeq }));
    }
  }

  private handlePingReq(from: Address, request: PingReqMessage): void {
    const seq = ++this.seq;
    const relay = new PendingRelay(from, request.seq);
    this.pending.set(seq, relay);
    this.send(request.targetAddress, encodeMessage({ kind: 'ping', seq, target: request.target }));
    relay.timer = this.clock.setTimer(this.config.probeTimeoutMs, () => {
      relay.timer = undefined;
      this.pending.delete(seq);
      if (request.wantNack) this.send(from, encodeMessage({ kind: 'nack', seq: request.seq }));
    });
  }

  /** Delivers a user broadcast seen for the first time and re-gossips it; returns whether it was new. */
  private handleUser(message: UserMessage): boolean {
    if (!this.seenBroadcasts.markSeen(message.origin, message.seq)) return false;
    const bytes = encodeMessage(message);
    this.queues.user.enqueue(bytes);
    this.recentBroadcasts.add(message.origin, message.seq, bytes, this.clock.now());
    this.counters.userBroadcastsDelivered++;
    this.options.onUserBroadcast(message.origin, message.payload);
    return true;
  }

  // ---- state transitions (memberlist aliveNode / suspectNode / deadNode) ----

  private handleAlive(message: AliveMessage): void {
    const member = this.record(message.name);
    // The common case by far: gossip repeating what we already know.
    if (member !== undefined && member !== this.self && message.incarnation <= member.incarnation) return;
    const now = this.clock.now();
    if (member === this.self) {
      if (this.leaving || message.incarnation < this.self.incarnation) return;
      const ownEcho =
        message.incarnation === this.self.incarnation &&
        message.address === this.self.address &&
        sameMetadata(message.metadata, this.self.metadata);
      // Anyone else claiming our name at our incarnation or above is contradicted with a newer one.
      if (!ownEcho) this.refute(message.incarnation);
      return;
    }
    const tombstone = this.tombstones.size === 0 ? undefined : this.tombstones.get(message.name, now);
    if (tombstone !== undefined) {
      if (message.incarnation <= tombstone.incarnation) return;
      this.tombstones.delete(message.name);
    }
    if (member === undefined) {
      this.addMember(message, now);
      return;
    }
    if (message.incarnation <= member.incarnation) return;
    const previous = member.state;
    const changed = member.address !== message.address || !sameMetadata(member.metadata, message.metadata);
    member.incarnation = message.incarnation;
    member.address = message.address;
    member.metadata = message.metadata;
    member.suspicion?.cancel();
    member.suspicion = undefined;
    if (previous !== 'alive') {
      member.state = 'alive';
      member.stateChangedAtMs = now;
    }
    this.checksumCache = undefined;
    // An alive that clears a suspicion is a refutation racing the suspicion's timeout on every member.
    this.broadcastMembership(member.name, message, undefined, previous === 'suspect' ? REFUTATION_TRANSMIT_SCALE : 1);
    if (previous === 'dead' || previous === 'left') {
      this.failed.forget(member.name);
      this.liveCount++;
      this.options.onLiveSetChanged();
      this.emit('join', member);
    } else if (changed || previous === 'suspect') {
      this.emit('update', member);
    }
  }

  /**
   * The record of `name`: through the process-wide string id when it has one (a small Map every member
   * shares, so it stays in cache, then this member's array), else this member's Map. At 1,000 simulated
   * members every member's own Map is cold, and looking one up is mostly cache misses.
   */
  private record(name: string): MemberRecord | undefined {
    const id = knownStringId(name);
    return id >= 0 ? this.membersById[id] : this.members.get(name);
  }

  private addRecord(member: MemberRecord): void {
    this.members.set(member.name, member);
    const id = stringId(member.name);
    if (id < 0) return;
    while (this.membersById.length <= id) this.membersById.push(undefined);
    this.membersById[id] = member;
  }

  private addMember(message: AliveMessage, now: number): void {
    const member = new MemberRecord(message.name, message.address, message.incarnation, message.metadata, 'alive', now);
    this.addRecord(member);
    if (this.failed.size > 0) this.failed.forget(member.name);
    // A new member goes to a random place in the probe order (SWIM 4.3), not to the end of the round.
    const order = this.probeOrder;
    order.push(member);
    const at = this.random.int(order.length);
    order[order.length - 1] = order[at] as MemberRecord;
    order[at] = member;
    this.liveCount++;
    this.checksumCache = undefined;
    this.broadcastMembership(member.name, message);
    this.options.onLiveSetChanged();
    this.emit('join', member);
  }

  private handleSuspect(message: SuspectMessage): void {
    const member = this.record(message.name);
    if (member === undefined || message.incarnation < member.incarnation) return;
    if (member.suspicion !== undefined) {
      // Another accuser: Lifeguard counts it and re-gossips so others can count it too.
      if (member.suspicion.confirm(message.from)) this.broadcastMembership(member.name, message);
      return;
    }
    if (member.state !== 'alive') return;
    if (member === this.self) {
      if (!this.leaving) this.refuteAccusation('suspect', message.incarnation);
      return;
    }
    this.broadcastMembership(member.name, message);
    member.incarnation = message.incarnation;
    member.state = 'suspect';
    member.stateChangedAtMs = this.clock.now();
    this.checksumCache = undefined;
    const n = this.liveCount;
    const minMs = minSuspicionTimeoutMs(this.config.suspicionMult, n, this.config.probeIntervalMs);
    const lifeguard = this.config.lifeguard;
    const expected = lifeguard ? expectedSuspicionConfirmations(this.config.suspicionMult, n) : 0;
    const maxMs = lifeguard ? maxSuspicionTimeoutMs(this.config.suspicionMaxTimeoutMult, minMs) : minMs;
    const incarnation = message.incarnation;
    member.suspicion = new Suspicion(this.clock, message.from, expected, minMs, maxMs, () => {
      member.suspicion = undefined;
      if (member.state === 'suspect' && member.incarnation === incarnation && this.running) {
        this.handleDead({ kind: 'dead', name: member.name, incarnation, from: this.self.name });
      }
    });
    this.emit('suspect', member);
  }

  private handleDead(message: DeadMessage): void {
    const member = this.record(message.name);
    if (member === undefined || message.incarnation < member.incarnation) return;
    if (member.state === 'dead' || member.state === 'left') return;
    if (member === this.self) {
      if (!this.leaving) this.refuteAccusation('dead', message.incarnation);
      return;
    }
    const now = this.clock.now();
    this.broadcastMembership(member.name, message);
    member.suspicion?.cancel();
    member.suspicion = undefined;
    member.incarnation = message.incarnation;
    member.state = message.from === message.name ? 'left' : 'dead';
    member.stateChangedAtMs = now;
    if (member.state === 'dead') this.failed.record(member.name, member.address, now);
    else this.failed.forget(member.name);
    this.deaths.push({ member, atMs: now });
    this.liveCount--;
    this.checksumCache = undefined;
    this.options.onLiveSetChanged();
    this.emit(member.state === 'left' ? 'leave' : 'fail', member);
  }

  /**
   * A suspect or dead message about ourselves came from `from`, which holds it (it is gossiping it, or
   * probing us with it through the buddy system). Gossip alone may never tell that member our answer: a
   * refutation goes out a limited number of times to random members, and an accusation older than our
   * incarnation is otherwise ignored, so a member that missed the refutation would let its suspicion run
   * out and declare us dead. Our current alive therefore goes straight back to the sender, once per
   * accusation received, right after the refutation (if this accusation needs one) has been made.
   */
  private answerAccusation(from: Address, state: 'suspect' | 'dead', accusedIncarnation: number): void {
    if (this.leaving || from === this.self.address) return;
    if (accusedIncarnation >= this.self.incarnation) this.refuteAccusation(state, accusedIncarnation);
    this.send(from, encodeMessage(this.selfAlive()));
  }

  /** Refutes an accusation and tells the owner of the member, which may have missed what others did meanwhile. */
  private refuteAccusation(state: 'suspect' | 'dead', accusedIncarnation: number): void {
    this.refute(accusedIncarnation);
    this.events.emit('accused', { state, incarnation: accusedIncarnation });
  }

  /** Answers an accusation about ourselves with an incarnation above it (SWIM 4.2). */
  private refute(accusedIncarnation: number): void {
    this.self.incarnation = Math.max(this.self.incarnation, accusedIncarnation) + 1;
    this.checksumCache = undefined;
    this.counters.refutations++;
    this.broadcastMembership(this.self.name, this.selfAlive(), undefined, REFUTATION_TRANSMIT_SCALE);
    // Lifeguard IV.A: being accused is a sign that we are slow to answer.
    this.applyAwareness(1);
  }

  private selfAlive(): AliveMessage {
    return {
      kind: 'alive',
      name: this.self.name,
      address: this.self.address,
      incarnation: this.self.incarnation,
      metadata: this.self.metadata,
    };
  }

  /** Dead and left members leave the table gossipToTheDeadTimeMs after dying, into tombstones. */
  private reapDead(now: number): void {
    const horizon = now - this.config.gossipToTheDeadTimeMs;
    while (this.deathsHead < this.deaths.length) {
      const death = this.deaths[this.deathsHead] as DeathRecord;
      if (death.atMs > horizon) break;
      this.deathsHead++;
      const member = death.member;
      // Skip deaths that were undone (refuted and died again later, or removed already).
      if (member.isLive || member.stateChangedAtMs !== death.atMs || this.members.get(member.name) !== member) continue;
      this.members.delete(member.name);
      const id = stringId(member.name);
      if (id >= 0) this.membersById[id] = undefined;
      const at = this.probeOrder.indexOf(member);
      if (at >= 0) {
        this.probeOrder.splice(at, 1);
        if (at < this.probeIndex) this.probeIndex--;
      }
      this.tombstones.record({
        name: member.name,
        incarnation: member.incarnation,
        state: member.state,
        expiresAtMs: death.atMs + this.config.tombstoneTimeMs,
      });
      this.checksumCache = undefined;
    }
    if (this.deathsHead > 1024 && this.deathsHead * 2 > this.deaths.length) {
      this.deaths = this.deaths.slice(this.deathsHead);
      this.deathsHead = 0;
    }
  }

  private emit(event: keyof MembershipEvents, member: MemberRecord): void {
    if (this.events.has(event)) this.events.emit(event, member.snapshot());
  }

  // ---- local operations ----

  /** Publishes new metadata with a bumped incarnation. */
  setMetadata(metadata: Metadata): void {
    this.self.metadata = metadata;
    this.self.incarnation++;
    this.checksumCache = undefined;
    if (this.running) this.broadcastMembership(this.self.name, this.selfAlive());
    this.emit('update', this.self);
  }

  /** Largest payload `broadcast` accepts: a packet minus its version byte and the message's own header. */
  get maxBroadcastBytes(): number {
    const header = encodeMessage({ kind: 'user', origin: this.self.name, seq: Number.MAX_SAFE_INTEGER, payload: EMPTY_BYTES }).length;
    // Past 127 bytes, the payload's length prefix and the message's body length take a byte more each.
    return this.transport.maxPacketBytes - 1 - header - 2;
  }

  /** Queues a user broadcast; it must fit one packet on its own. */
  broadcast(payload: Uint8Array): void {
    const seq = ++this.userSeq;
    const bytes = encodeMessage({ kind: 'user', origin: this.self.name, seq, payload });
    const maxBytes = this.transport.maxPacketBytes - 1;
    if (bytes.length > maxBytes) throw new BroadcastTooLargeError(bytes.length, maxBytes);
    this.seenBroadcasts.markSeen(this.self.name, seq);
    this.queues.user.enqueue(bytes);
    this.recentBroadcasts.add(this.self.name, seq, bytes, this.clock.now());
    this.counters.userBroadcastsSent++;
  }

  /**
   * Joins through `seeds`: a push-pull with each, all at once; resolves with how many answered. While
   * none answers it tells `onUnanswered` the round's number and retries with exponential back-off until
   * `signal` aborts.
   */
  async join(seeds: readonly Address[], signal?: AbortSignal, onUnanswered?: (round: number) => void): Promise<number> {
    const targets = seeds.filter((seed) => seed !== this.self.address);
    if (targets.length === 0) return 0;
    let delayMs = this.config.joinRetryInitialMs;
    for (let round = 1; ; round++) {
      if (signal?.aborted) throw new JoinAbortedError({ cause: signal.reason });
      if (!this.running) throw new ClusterStoppedError('join');
      this.seeds = targets;
      const results = await Promise.allSettled(targets.map((seed) => this.pushPull(seed, signal, true)));
      const answered = results.filter((r) => r.status === 'fulfilled').length;
      if (answered > 0) return answered;
      onUnanswered?.(round);
      await this.wait(delayMs, signal);
      delayMs = Math.min(delayMs * 2, this.config.joinRetryMaxMs);
    }
  }

  /** Resolves after `delayMs` of clock time; rejects when `signal` aborts or the member stops. */
  private wait(delayMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => finish(new JoinAbortedError({ cause: signal?.reason }));
      const entry = {
        timer: this.clock.setTimer(delayMs, () => finish()),
        cancel: () => finish(new ClusterStoppedError('join')),
      };
      const finish = (error?: Error): void => {
        if (!this.waits.delete(entry)) return;
        this.clock.clearTimer(entry.timer);
        signal?.removeEventListener('abort', onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      this.waits.add(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Leaves gracefully: marks itself left, gossips that (memberlist's dead message from itself) and
   * resolves once the message has been sent its full number of times, or after `timeoutMs`.
   */
  leave(timeoutMs: number): Promise<void> {
    if (!this.running || this.leaving) return Promise.resolve();
    this.leaving = true;
    this.self.state = 'left';
    this.self.stateChangedAtMs = this.clock.now();
    this.liveCount--;
    this.checksumCache = undefined;
    this.options.onLiveSetChanged();
    if (this.liveCount === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const entry = {
        timer: this.clock.setTimer(timeoutMs, () => done()),
        cancel: () => done(),
      };
      const done = (): void => {
        if (!this.waits.delete(entry)) return;
        this.clock.clearTimer(entry.timer);
        resolve();
      };
      this.waits.add(entry);
      const message: DeadMessage = {
        kind: 'dead',
        name: this.self.name,
        incarnation: this.self.incarnation,
        from: this.self.name,
      };
      this.broadcastMembership(this.self.name, message, done);
    });
  }
}
