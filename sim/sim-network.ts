// The simulated network: hosts at opaque addresses, directed links that carry latency, loss,
// duplication and reordering as data, partitions, and the faults of a node's process (crash, pause,
// restart). One root Random drives it, forked per subsystem ('latency', 'loss', ...) so that turning
// one fault on does not shift the draws another subsystem sees (TigerBeetle's packet simulator is the
// model). Every node instance gets a SimTransport, a Clock and a Random of its own.

import type { Clock } from '../cluster/clock.js';
import type { Random } from '../cluster/random.js';
import type { Address } from '../cluster/transport.js';
import { DuplicateAddressError, NodeStateError, UnknownAddressError } from './errors.js';
import { LAN_LINK, resolveLink, sampleLatencyMs, type LinkOptions } from './link.js';
import { NodeClock } from './node-clock.js';
import { SimClock, type EventOwner, type OwnerStatus, type SimEvent } from './sim-clock.js';
import { SimTransport, type OutgoingRequest, type SimWire } from './sim-transport.js';

/**
 * Packet copies are cut from shared slabs: one small view per packet instead of one backing store,
 * which is several times cheaper in V8. 64 KiB keeps what one retained packet pins down small.
 */
const COPY_SLAB_BYTES = 64 * 1024;

/** The largest packet a LAN datagram carries without fragmentation (1500-byte MTU minus headers). */
export const DEFAULT_MAX_PACKET_BYTES = 1400;

export interface SimNetworkOptions {
  /** The root of every random draw of the run; the network forks its subsystems from it. */
  random: Random;
  /** The clock to schedule on; a fresh one when omitted. */
  clock?: SimClock;
  /** The default link, merged over LAN_LINK; per-link overrides come from `setLink`. */
  link?: Partial<LinkOptions>;
  /** Packets above this are a sender bug and throw PacketTooLargeError. Default 1400. */
  maxPacketBytes?: number;
  /** Whether transports offer a native Broadcaster (like gossipsub). Default false, as UDP has none. */
  nativeBroadcast?: boolean;
}

/** What a node's code runs on: one instance of a process at an address. */
export interface SimNode {
  readonly address: Address;
  /** 0 for the first process at this address, then one more per restart. */
  readonly instance: number;
  readonly transport: SimTransport;
  readonly clock: Clock;
  readonly random: Random;
}

/** A node's process as the network sees it. */
export type SimNodeState = 'running' | 'paused' | 'crashed';

/** Counters of what the network did with traffic, for reports and tests. */
export interface SimNetworkStats {
  packetsSent: number;
  packetsDelivered: number;
  packetsLost: number;
  packetsDuplicated: number;
  /** Dropped by a partition (a blocked link) at the sender. */
  packetsBlocked: number;
  /** Addressed to an address where no node was ever added. */
  packetsUnroutable: number;
  requestsSent: number;
  requestsRefused: number;
  broadcastsDelivered: number;
}

/** One process at an address; its timers are dropped once it is dead (crashed or replaced). */
class SimInstance implements EventOwner {
  status: OwnerStatus = 'running';
  readonly clock: NodeClock;
  readonly transport: SimTransport;
  readonly node: SimNode;

  constructor(
    readonly host: SimHost,
    readonly number: number,
    clock: SimClock,
    random: Random,
    maxPacketBytes: number,
    wire: SimWire,
    nativeBroadcast: boolean,
  ) {
    this.clock = new NodeClock(clock, this);
    this.transport = new SimTransport(host.address, maxPacketBytes, this.clock, wire, nativeBroadcast);
    this.node = { address: host.address, instance: number, transport: this.transport, clock: this.clock, random };
  }

  /** Paused and running instances share the host's held queue, so a resume releases both in order. */
  get held(): SimEvent[] {
    return this.host.held;
  }
}

/** An address and its current process; deliveries to the address are held or dropped with it. */
class SimHost implements EventOwner {
  status: OwnerStatus = 'running';
  readonly held: SimEvent[] = [];
  /** Directed links from this host that a partition blocks. */
  blockedTo: Set<SimHost> | null = null;
  /** Directed links from this host with their own options. */
  linkTo: Map<SimHost, LinkOptions> | null = null;
  instance!: SimInstance;

  constructor(readonly address: Address) {}
}

class Packet {
  constructor(
    readonly from: Address,
    readonly data: Uint8Array,
  ) {}
}

class BroadcastMessage {
  constructor(
    readonly from: Address,
    readonly topic: string,
    readonly data: Uint8Array,
  ) {}
}

/** A request leg in flight: arriving at the callee, or its outcome travelling back to the caller. */
class RequestLeg {
  constructor(
    readonly request: OutgoingRequest,
    /** The process that sent the request: only it can read the answer. */
    readonly caller: SimInstance,
    readonly from: SimHost,
    readonly to: SimHost,
    /** Set on the way back: the response body, or the error code the caller sees. */
    readonly response: Uint8Array | null = null,
    readonly errorCode: 'refused' | 'remote' | null = null,
    readonly errorMessage = '',
  ) {}
}

export class SimNetwork implements SimWire {
  readonly clock: SimClock;
  readonly maxPacketBytes: number;
  private defaultLink: LinkOptions;
  private readonly nativeBroadcast: boolean;
  private readonly hosts = new Map<Address, SimHost>();
  private slab = new Uint8Array(COPY_SLAB_BYTES);
  private slabOffset = 0;
  private readonly latencyRandom: Random;
  private readonly lossRandom: Random;
  private readonly duplicationRandom: Random;
  private readonly reorderRandom: Random;
  private readonly nodeRandom: Random;
  private readonly counters: SimNetworkStats = {
    packetsSent: 0,
    packetsDelivered: 0,
    packetsLost: 0,
    packetsDuplicated: 0,
    packetsBlocked: 0,
    packetsUnroutable: 0,
    requestsSent: 0,
    requestsRefused: 0,
    broadcastsDelivered: 0,
  };
  // Handlers bound once, so scheduling a delivery allocates no closure.
  private readonly onPacketArrival = (event: SimEvent): void => this.arrivePacket(event);
  private readonly onRequestArrival = (event: SimEvent): void => this.arriveRequest(event);
  private readonly onResponseArrival = (event: SimEvent): void => this.arriveResponse(event);
  private readonly onBroadcastArrival = (event: SimEvent): void => this.arriveBroadcast(event);

  constructor(options: SimNetworkOptions) {
    this.clock = options.clock ?? new SimClock();
    this.maxPacketBytes = options.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES;
    this.defaultLink = resolveLink(LAN_LINK, options.link);
    this.nativeBroadcast = options.nativeBroadcast ?? false;
    this.latencyRandom = options.random.fork('latency');
    this.lossRandom = options.random.fork('loss');
    this.duplicationRandom = options.random.fork('duplication');
    this.reorderRandom = options.random.fork('reorder');
    this.nodeRandom = options.random.fork('nodes');
  }

  /** Adds a running node at `address` and returns what its code runs on. */
  addNode(address: Address): SimNode {
    if (this.hosts.has(address)) throw new DuplicateAddressError(address);
    const host = new SimHost(address);
    this.hosts.set(address, host);
    host.instance = this.newInstance(host, 0);
    return host.instance.node;
  }

  /** The current process at `address`. */
  node(address: Address): SimNode {
    return this.host(address).instance.node;
  }

  addresses(): Address[] {
    return [...this.hosts.keys()];
  }

  state(address: Address): SimNodeState {
    const status = this.host(address).status;
    return status === 'dead' ? 'crashed' : status;
  }

  /** Changes the default link (e.g. turns loss on after a clean start); per-link overrides stay. */
  setDefaultLink(options: Partial<LinkOptions>): void {
    this.defaultLink = resolveLink(this.defaultLink, options);
  }

  /** Gives the directed link from -> to its own options, merged over the network's default link. */
  setLink(from: Address, to: Address, options: Partial<LinkOptions>): void {
    const source = this.host(from);
    const link = resolveLink(this.defaultLink, options);
    (source.linkTo ??= new Map()).set(this.host(to), link);
  }

  /** Puts the directed link from -> to back on the default options. */
  clearLink(from: Address, to: Address): void {
    this.host(from).linkTo?.delete(this.host(to));
  }

  /** Blocks traffic from -> to only (an asymmetric partition); to -> from still works. */
  block(from: Address, to: Address): void {
    const source = this.host(from);
    (source.blockedTo ??= new Set()).add(this.host(to));
  }

  unblock(from: Address, to: Address): void {
    this.host(from).blockedTo?.delete(this.host(to));
  }

  /**
   * Cuts every link between `sideA` and `sideB`: both ways when `symmetric` (the default), or only
   * from A to B otherwise (A's messages vanish while B's still reach A).
   */
  partition(sideA: readonly Address[], sideB: readonly Address[], symmetric = true): void {
    for (const a of sideA) {
      for (const b of sideB) {
        this.block(a, b);
        if (symmetric) this.block(b, a);
      }
    }
  }

  /** Removes every partition; link options stay. */
  heal(): void {
    for (const host of this.hosts.values()) host.blockedTo = null;
  }

  /** Kills the process at `address`: its timers stop, its traffic is dropped, requests to it are refused. */
  crash(address: Address): void {
    const host = this.host(address);
    if (host.status === 'dead') throw new NodeStateError(address, 'crash', 'crashed');
    host.status = 'dead';
    host.instance.status = 'dead';
    host.held.length = 0;
    host.instance.transport.crash();
  }

  /** Stalls the process (a GC pause, SIGSTOP): its timers and deliveries wait until `resume`. */
  pause(address: Address): void {
    const host = this.host(address);
    if (host.status !== 'running') throw new NodeStateError(address, 'pause', this.state(address));
    host.status = 'paused';
    host.instance.status = 'paused';
  }

  /** Lets a paused process run again; what it missed fires now, in the order it fell due. */
  resume(address: Address): void {
    const host = this.host(address);
    if (host.status !== 'paused') throw new NodeStateError(address, 'resume', this.state(address));
    host.status = 'running';
    host.instance.status = 'running';
    const held = host.held.splice(0);
    this.clock.release(held);
  }

  /** Replaces the process at `address` with a fresh one (crashing the old one if it still runs). */
  restart(address: Address): SimNode {
    const host = this.host(address);
    if (host.status !== 'dead') this.crash(address);
    host.instance = this.newInstance(host, host.instance.number + 1);
    host.status = 'running';
    return host.instance.node;
  }

  stats(): SimNetworkStats {
    return { ...this.counters };
  }

  noteAsyncWork(): void {
    this.clock.noteAsyncWork();
  }

  sendPacket(from: SimTransport, to: Address, data: Uint8Array): void {
    this.counters.packetsSent++;
    const source = this.hosts.get(from.localAddress);
    const target = this.hosts.get(to);
    if (source === undefined || target === undefined) {
      this.counters.packetsUnroutable++;
      return;
    }
    if (source.blockedTo !== null && source.blockedTo.has(target)) {
      this.counters.packetsBlocked++;
      return;
    }
    const link = this.link(source, target);
    if (link.lossProbability > 0 && this.lossRandom.next() < link.lossProbability) {
      this.counters.packetsLost++;
      return;
    }
    // The sender may reuse its buffer once sendPacket returns, as it may with a real socket.
    const packet = new Packet(from.localAddress, this.copy(data));
    this.clock.scheduleEvent(this.packetDelayMs(link), this.onPacketArrival, packet, target);
    if (link.duplicationProbability > 0 && this.duplicationRandom.next() < link.duplicationProbability) {
      this.counters.packetsDuplicated++;
      this.clock.scheduleEvent(this.packetDelayMs(link), this.onPacketArrival, packet, target);
    }
  }

  sendRequest(request: OutgoingRequest): void {
    this.counters.requestsSent++;
    const source = this.host(request.caller.localAddress);
    const target = this.hosts.get(request.to);
    if (target === undefined) {
      // Nothing was ever at that address; model the host answering that nothing listens there.
      this.counters.requestsRefused++;
      const delayMs = 2 * sampleLatencyMs(this.defaultLink.latency, this.latencyRandom);
      const leg = new RequestLeg(request, source.instance, source, source, null, 'refused', `nothing listens at ${request.to}`);
      this.clock.scheduleEvent(delayMs, this.onResponseArrival, leg, source.instance);
      return;
    }
    if (this.blocked(source, target)) return;
    const leg = new RequestLeg(request, source.instance, source, target);
    this.clock.scheduleEvent(this.legDelayMs(source, target), this.onRequestArrival, leg, null);
  }

  publish(from: SimTransport, topic: string, data: Uint8Array): void {
    const source = this.host(from.localAddress);
    const message = new BroadcastMessage(from.localAddress, topic, data);
    for (const target of this.hosts.values()) {
      if (target === source || this.blocked(source, target)) continue;
      this.clock.scheduleEvent(this.legDelayMs(source, target), this.onBroadcastArrival, message, target);
    }
  }

  private copy(data: Uint8Array): Uint8Array {
    const length = data.byteLength;
    if (this.slabOffset + length > this.slab.byteLength) {
      this.slab = new Uint8Array(Math.max(COPY_SLAB_BYTES, length));
      this.slabOffset = 0;
    }
    const copy = this.slab.subarray(this.slabOffset, this.slabOffset + length);
    copy.set(data);
    this.slabOffset += length;
    return copy;
  }

  private host(address: Address): SimHost {
    const host = this.hosts.get(address);
    if (host === undefined) throw new UnknownAddressError(address);
    return host;
  }

  private newInstance(host: SimHost, number: number): SimInstance {
    const random = this.nodeRandom.fork(`${host.address}#${number}`);
    return new SimInstance(host, number, this.clock, random, this.maxPacketBytes, this, this.nativeBroadcast);
  }

  private blocked(from: SimHost, to: SimHost): boolean {
    return from.blockedTo !== null && from.blockedTo.has(to);
  }

  private link(from: SimHost, to: SimHost): LinkOptions {
    return (from.linkTo !== null ? from.linkTo.get(to) : undefined) ?? this.defaultLink;
  }

  private packetDelayMs(link: LinkOptions): number {
    let delayMs = sampleLatencyMs(link.latency, this.latencyRandom);
    if (link.reorderProbability > 0 && this.reorderRandom.next() < link.reorderProbability) {
      delayMs += this.reorderRandom.next() * link.reorderJitterMs;
    }
    return delayMs;
  }

  /** One leg of a reliable exchange: the link's latency, never lost, duplicated or reordered. */
  private legDelayMs(from: SimHost, to: SimHost): number {
    return sampleLatencyMs(this.link(from, to).latency, this.latencyRandom);
  }

  private arrivePacket(event: SimEvent): void {
    const host = event.owner as SimHost;
    const packet = event.arg as Packet;
    this.counters.packetsDelivered++;
    host.instance.transport.deliverPacket(packet.from, packet.data);
  }

  private arriveBroadcast(event: SimEvent): void {
    const host = event.owner as SimHost;
    const message = event.arg as BroadcastMessage;
    const transport = host.instance.transport;
    if (!transport.receiving || !transport.subscribes(message.topic)) return;
    this.counters.broadcastsDelivered++;
    transport.deliverBroadcast(message.from, message.topic, message.data);
  }

  private arriveRequest(event: SimEvent): void {
    const leg = event.arg as RequestLeg;
    const target = leg.to;
    if (target.status === 'paused') {
      // A stalled process reads its socket only once it resumes.
      event.handler = this.onRequestArrival;
      target.held.push(event);
      return;
    }
    const transport = target.instance.transport;
    if (target.status === 'dead' || !transport.receiving) {
      this.counters.requestsRefused++;
      this.respond(leg, null, 'refused', `nothing listens at ${target.address}`);
      return;
    }
    const responder = target.instance;
    this.clock.noteAsyncWork();
    transport.serve(leg.from.address, leg.request.channel, leg.request.body).then(
      (body) => {
        // A response from a process that died meanwhile never leaves it.
        if (responder.status !== 'dead') this.respond(leg, body.slice(), null, '');
      },
      (error: unknown) => {
        if (responder.status !== 'dead') this.respond(leg, null, 'remote', String(error));
      },
    );
  }

  private respond(leg: RequestLeg, body: Uint8Array | null, code: 'refused' | 'remote' | null, message: string): void {
    if (this.blocked(leg.to, leg.from)) return;
    const back = new RequestLeg(leg.request, leg.caller, leg.to, leg.from, body, code, message);
    // The caller instance owns the answer: a paused caller reads it on resume, a dead one never does.
    this.clock.scheduleEvent(this.legDelayMs(leg.to, leg.from), this.onResponseArrival, back, leg.caller);
  }

  private arriveResponse(event: SimEvent): void {
    const leg = event.arg as RequestLeg;
    if (leg.errorCode !== null) leg.request.fail(leg.errorCode, leg.errorMessage);
    else leg.request.succeed(leg.response ?? new Uint8Array(0));
  }
}
