// What decides, for one clustered node, whether it may serve from its cache: its lease (cluster/
// lease.ts) and its rejoin gate. svc's node (cluster-node.ts) and the simulator's nodes
// (scenarios/svc-sim-nodes.ts) run this same code; they differ only in their clocks and in what they
// tell the operator.
//
// - Strong mode: the gate's lease follows the keeper's; without a lease nothing is served from cache.
// - Both modes: a node whose lease lapsed and came back, or that refuted an accusation of suspicion or
//   death, may have missed invalidations: it holds back what it cached before that moment and
//   catches up again (the gate opens when catch-up ends, which the node's onCaughtUp does).
// - A strong invalidation that missed members waits until none of them can still hold a lease.
import { LeaseKeeper, majorityOf, type Clock, type LeaseMember } from '../../cluster/index.js';
import type { ClusterMode } from './invalidation-delivery.js';
import type { ServeGate } from './serve-gate.js';

/** What the guard needs of the cluster member (the library's ClusterMember has it). */
export interface GuardedMember extends LeaseMember {
  on(event: 'accused', listener: (accusation: { readonly state: 'suspect' | 'dead' }) => void): () => void;
}

export interface ServeGuardOptions {
  member: GuardedMember;
  mode: ClusterMode;
  leaseMs: number;
  /** The cluster's clock, which leases are measured on. */
  clock: Clock;
  /** The node's clock, which entries record their request times on. */
  now: () => number;
  gate: ServeGate;
  /** A cluster-clock time as the gate keeps lease times (ServeGate.leaseUntil). */
  gateTime: (clockMs: number) => number;
  /** Starts catching up again from `required` peers, for what was made since `sinceMs` (CatchUp.again). */
  catchUpAgain: (required: number, sinceMs: number) => void;
  /** Strong mode: the lease lapsed; nothing is served from the cache until a majority answers. */
  onLeaseLost?: () => void;
  /** The node is catching up again, and why. */
  onRejoin?: (reason: string) => void;
}

export class ServeGuard {
  readonly #keeper: LeaseKeeper;
  #unsubscribe: (() => void) | undefined;
  /** When (the node's clock) the lease was last found lapsed. */
  #lostAt: number | undefined;

  constructor(private readonly options: ServeGuardOptions) {
    const { member, mode, leaseMs, clock, gate, gateTime } = options;
    const strong = mode === 'strong';
    // Strong mode serves nothing until the first majority answers (at once when the node is alone).
    if (strong) gate.leaseUntil(Number.NEGATIVE_INFINITY);
    this.#keeper = new LeaseKeeper(member, {
      leaseMs,
      clock,
      onRenewed: (validUntil) => {
        if (strong) gate.leaseUntil(gateTime(validUntil));
      },
      onLost: () => {
        this.#lostAt = options.now();
        if (strong) options.onLeaseLost?.();
      },
      onRegained: () => this.rejoin('its lease lapsed (paused, or cut off from a majority) and a majority answers again', this.#lostAt),
    });
  }

  get leaseMs(): number {
    return this.#keeper.leaseMs;
  }

  /** Whether the lease holds now (the cluster's clock). */
  leased(): boolean {
    return this.#keeper.holds();
  }

  start(): void {
    this.#unsubscribe = this.options.member.on('accused', ({ state }) =>
      this.rejoin(state === 'dead' ? 'another member declared it dead' : 'another member suspected it', undefined),
    );
    this.#keeper.start();
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#keeper.stop();
  }

  /**
   * Resolves once none of `missed` can still hold a lease, with the time waited. A member's lease
   * counts only its own rounds, and its last round that reached this node was answered at
   * `answeredAt`: it holds none past `answeredAt + lease`.
   */
  outlast(missed: readonly string[]): Promise<number> {
    const { clock } = this.options;
    const now = clock.now();
    const until = Math.max(now, ...missed.map((name) => this.#keeper.answeredAt(name) + this.#keeper.leaseMs));
    if (until <= now) return Promise.resolve(0);
    return new Promise((resolve) => clock.setTimer(until - now, () => resolve(until - now)));
  }

  /**
   * Holds back what was cached before now and catches up again with a majority of the view, for what
   * was made since the lease was lost (or since it last held for sure: one lease before the loss).
   */
  private rejoin(reason: string, lostAt: number | undefined): void {
    const { now, gate, member, leaseMs } = this.options;
    const at = now();
    gate.holdBackBefore(at);
    this.options.onRejoin?.(reason);
    this.options.catchUpAgain(majorityOf(member.view().length), (lostAt ?? at) - 2 * leaseMs);
  }
}
