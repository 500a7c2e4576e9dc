// A cluster of real cluster members (cluster/index.ts) on one SimNetwork: the harness every scenario
// and the seeded tests build on. It creates and restarts members, applies process faults, and keeps
// each member's count of live members from its events, so convergence checks stay cheap at 1,000
// nodes (a checksum is only compared once every member already counts the right number of live peers).

import {
  createClusterMember,
  resolveMembershipConfig,
  type ClusterMember,
  type ClusterMemberOptions,
  type MembershipConfig,
  type Random,
  type Transport,
} from '../cluster/index.js';
import type { LinkOptions } from './link.js';
import { SimNetwork } from './sim-network.js';
import type { SimClock } from './sim-clock.js';

export interface SimClusterOptions {
  nodes: number;
  /** Root of the run's randomness: the network, every member and the harness fork from it. */
  random: Random;
  /** Default link of the network (LAN_LINK when omitted). */
  link?: Partial<LinkOptions>;
  /** Overrides of the cluster's default profile (e.g. `lifeguard: false`). */
  config?: Partial<MembershipConfig>;
  /** More options of node `index`'s member (a consumer's push-pull delegate, metadata), per instance. */
  memberOptions?: (index: number) => Partial<Pick<ClusterMemberOptions, 'delegate' | 'metadata' | 'onListenerError' | 'ringMembers'>>;
  /** Wraps the simulated transport of node `index` (e.g. to seal its traffic), per instance. */
  wrapTransport?: (transport: Transport, index: number) => Transport;
}

/** Called for every member the harness creates, restarts included, so scenarios can listen to it. */
export type MemberHook = (index: number, member: ClusterMember) => void;

export class SimCluster {
  readonly network: SimNetwork;
  readonly clock: SimClock;
  readonly size: number;
  readonly names: readonly string[];
  readonly addresses: readonly string[];
  /** The members' profile: the cluster's defaults overlaid with the options' overrides. */
  readonly config: MembershipConfig;
  private readonly members: (ClusterMember | undefined)[];
  /** Live members (alive or suspect, self included) each member knows of, kept from its events. */
  private readonly liveCounts: Int32Array;
  private readonly hooks: MemberHook[] = [];
  private readonly memberOptions: SimClusterOptions['memberOptions'];
  private readonly wrapTransport: SimClusterOptions['wrapTransport'];

  constructor(options: SimClusterOptions) {
    this.memberOptions = options.memberOptions;
    this.wrapTransport = options.wrapTransport;
    this.size = options.nodes;
    this.network = new SimNetwork({ random: options.random.fork('network'), link: options.link });
    this.clock = this.network.clock;
    this.config = resolveMembershipConfig(options.config);
    const names: string[] = [];
    const addresses: string[] = [];
    for (let i = 0; i < options.nodes; i++) {
      names.push(`node-${String(i).padStart(4, '0')}`);
      addresses.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:7946`);
      this.network.addNode(addresses[i]!);
    }
    this.names = names;
    this.addresses = addresses;
    this.members = new Array<ClusterMember | undefined>(options.nodes).fill(undefined);
    this.liveCounts = new Int32Array(options.nodes);
  }

  onMember(hook: MemberHook): void {
    this.hooks.push(hook);
  }

  /** The member currently running at index `i` (its latest instance). */
  member(index: number): ClusterMember {
    const member = this.members[index];
    if (member === undefined) throw new RangeError(`node ${index} was never started`);
    return member;
  }

  indexOf(name: string): number {
    return this.names.indexOf(name);
  }

  /** Creates and starts the member for the current process at index `i`. */
  async start(index: number): Promise<ClusterMember> {
    const node = this.network.node(this.addresses[index]!);
    const member = createClusterMember({
      ...this.memberOptions?.(index),
      name: this.names[index]!,
      transport: this.wrapTransport?.(node.transport, index) ?? node.transport,
      clock: node.clock,
      random: node.random,
      config: this.config,
    });
    this.members[index] = member;
    this.liveCounts[index] = 1;
    const counts = this.liveCounts;
    member.on('join', () => counts[index]!++);
    member.on('fail', () => counts[index]!--);
    member.on('leave', () => counts[index]!--);
    for (const hook of this.hooks) hook(index, member);
    await member.start();
    return member;
  }

  /** Starts joining through the given seed nodes; joining retries with back-off until one answers. */
  join(index: number, seedIndexes: readonly number[]): void {
    const seeds = seedIndexes.map((seed) => this.addresses[seed]!);
    // A join of a node that crashes meanwhile never settles; nothing waits for it.
    void this.member(index).join(seeds);
  }

  /**
   * Starts every member and has each one but node 0 join through node 0, at a time spread uniformly
   * over `joinSpreadMs` (from the harness's own random stream), as a rolling start would.
   */
  async bootstrap(random: Random, joinSpreadMs: number): Promise<void> {
    for (let i = 0; i < this.size; i++) await this.start(i);
    for (let i = 1; i < this.size; i++) {
      this.clock.setTimer(random.next() * joinSpreadMs, () => this.join(i, [0]));
    }
  }

  /** Whether the process at index `i` has not crashed (a paused process is still up). */
  isUp(index: number): boolean {
    return this.network.state(this.addresses[index]!) !== 'crashed';
  }

  liveCount(index: number): number {
    return this.liveCounts[index]!;
  }

  /**
   * Whether every member that is up counts `expectedLive` live members, all report one checksum, and
   * that view has nobody suspect: the cluster agrees on its member table.
   */
  converged(expectedLive: number): boolean {
    let first = -1;
    for (let i = 0; i < this.size; i++) {
      if (!this.isUp(i)) continue;
      if (this.liveCounts[i] !== expectedLive) return false;
      if (first < 0) first = i;
    }
    if (first < 0) return false;
    const checksum = this.member(first).checksum();
    for (let i = first + 1; i < this.size; i++) {
      if (this.isUp(i) && this.member(i).checksum() !== checksum) return false;
    }
    let alive = 0;
    for (const info of this.member(first).members()) {
      if (info.state === 'suspect') return false;
      if (info.state === 'alive') alive++;
    }
    return alive === expectedLive;
  }

  /**
   * Runs the clock until `predicate` holds, checking every `stepMs`, for at most `budgetMs`.
   * Resolves to the virtual time it took (a multiple of stepMs), or null if the budget ran out.
   */
  async waitFor(predicate: () => boolean, stepMs: number, budgetMs: number): Promise<number | null> {
    const startMs = this.clock.now();
    for (;;) {
      if (predicate()) return this.clock.now() - startMs;
      if (this.clock.now() - startMs >= budgetMs) return null;
      await this.clock.runFor(stepMs);
    }
  }

  crash(index: number): void {
    this.network.crash(this.addresses[index]!);
  }

  pause(index: number): void {
    this.network.pause(this.addresses[index]!);
  }

  resume(index: number): void {
    this.network.resume(this.addresses[index]!);
  }

  /** Replaces the process at index `i` with a fresh member that joins through `seedIndexes`. */
  async restart(index: number, seedIndexes: readonly number[]): Promise<ClusterMember> {
    this.network.restart(this.addresses[index]!);
    const member = await this.start(index);
    this.join(index, seedIndexes);
    return member;
  }
}
