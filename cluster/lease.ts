// Leases: whether this member may act on what it holds (for svc: serve its cache) because it is in
// touch with a majority of the last known view. Every `leaseMs / 4` the member asks each member of the
// view for a reply on the `lease` channel, all at once; a reply proves contact as of when the round was
// sent. The lease holds until `leaseMs` after the round in which a majority (self included) last replied.
//
// The other side records when it answered each asker. A member that cannot reach a peer bounds that
// peer's lease by it: the peer's lease counts only rounds it sent itself, it sends to every member at
// once, and its last round that reached this member was answered at `answeredAt`, so (barring a
// partition that cuts one round in half) the peer holds no lease later than `answeredAt + leaseMs`.
//
// A member paused (SIGSTOP, a long GC, a VM migration) or cut off loses its lease as time passes, without
// a timer having to fire; `onLost` is told at the first round after, `onRegained` when a majority answers
// again. Measured on the member's Clock, which never goes backwards.
import type { Clock, TimerHandle } from './clock.js';
import type { RequestHandler, RequestOptions } from './transport.js';

export const LEASE_CHANNEL = 'lease';

/** What the lease keeper needs of a cluster member (ClusterMember has it). */
export interface LeaseMember {
  readonly localMember: { readonly name: string };
  view(): string[];
  request(member: string, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  handleRequest(channel: string, handler: RequestHandler): void;
}

export interface LeaseOptions {
  readonly leaseMs: number;
  readonly clock: Clock;
  /** The lease now runs to `validUntil` (Clock time); told on every change. */
  readonly onRenewed?: (validUntil: number) => void;
  /** The lease lapsed (a round found it expired): what was held may have missed what others did. */
  readonly onLost?: () => void;
  /** A majority answered again after a loss (not the first time the lease is had). */
  readonly onRegained?: () => void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EMPTY = new Uint8Array(0);

/** Members of a view of `others` besides self that must answer for a majority (self counts as one). */
export function majorityOf(others: number): number {
  return Math.floor((others + 1) / 2);
}

export class LeaseKeeper {
  /** When each member last answered a round of ours, as of the round's sending. */
  readonly #heard = new Map<string, number>();
  /**
   * When each member that has not answered yet entered the view. It counts as heard then: a member
   * just learned of (a join) has not had a round to answer, and the view growing must not take a lease
   * that a majority of the old view still gives (every node would lose and regain it on joining).
   */
  readonly #joined = new Map<string, number>();
  /** When this member last answered each asker. */
  readonly #answered = new Map<string, number>();
  #validUntil = Number.NEGATIVE_INFINITY;
  #held = false;
  /** Whether the lease was ever held: the first one is no regain. */
  #heldOnce = false;
  #timer: TimerHandle | undefined;
  #startedAt = Number.NEGATIVE_INFINITY;
  #stopped = false;

  constructor(
    private readonly member: LeaseMember,
    private readonly options: LeaseOptions,
  ) {}

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Serves the lease channel and starts the rounds. */
  start(): void {
    this.#startedAt = this.options.clock.now();
    this.member.handleRequest(LEASE_CHANNEL, (_from, body) => {
      const asker = decoder.decode(body);
      if (this.member.view().includes(asker)) this.#answered.set(asker, this.options.clock.now());
      return Promise.resolve(EMPTY);
    });
    this.#round();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.options.clock.clearTimer(this.#timer);
  }

  /** Until when (Clock time) the lease holds, as of the answers received so far. */
  validUntil(): number {
    return this.#validUntil;
  }

  holds(now = this.options.clock.now()): boolean {
    return now < this.#validUntil;
  }

  /**
   * The latest time this member answered a lease round of `name`: when it last did, or when this keeper
   * started if it never has (it cannot have answered before).
   */
  answeredAt(name: string): number {
    return this.#answered.get(name) ?? this.#startedAt;
  }

  #round(): void {
    if (this.#stopped) return;
    const { clock, leaseMs } = this.options;
    const sentAt = clock.now();
    this.#check(sentAt);
    const body = encoder.encode(this.member.localMember.name);
    const timeoutMs = Math.max(1, Math.floor(leaseMs / 4));
    for (const name of this.member.view()) {
      this.member.request(name, LEASE_CHANNEL, body, { timeoutMs }).then(
        () => this.#answer(name, sentAt),
        () => undefined,
      );
    }
    this.#recompute();
    this.#timer = clock.setTimer(timeoutMs, () => this.#round());
  }

  #answer(name: string, sentAt: number): void {
    if (this.#stopped || (this.#heard.get(name) ?? Number.NEGATIVE_INFINITY) >= sentAt) return;
    this.#heard.set(name, sentAt);
    this.#joined.delete(name);
    this.#recompute();
    this.#check(this.options.clock.now());
  }

  /** The lease runs to `leaseMs` after the round in which the majority-th member last answered. */
  #recompute(): void {
    const view = this.member.view();
    const now = this.options.clock.now();
    for (const name of view) if (!this.#heard.has(name) && !this.#joined.has(name)) this.#joined.set(name, now);
    const needed = majorityOf(view.length);
    const times = view.map((name) => this.#heard.get(name) ?? this.#joined.get(name) ?? Number.NEGATIVE_INFINITY).sort((a, b) => b - a);
    const validUntil = needed === 0 ? Number.POSITIVE_INFINITY : (times[needed - 1] ?? Number.NEGATIVE_INFINITY) + this.options.leaseMs;
    for (const names of [this.#heard, this.#joined]) for (const name of names.keys()) if (!view.includes(name)) names.delete(name);
    if (validUntil === this.#validUntil) return;
    this.#validUntil = validUntil;
    this.options.onRenewed?.(validUntil);
  }

  #check(now: number): void {
    const holds = this.holds(now);
    if (holds === this.#held) return;
    this.#held = holds;
    if (!holds) this.options.onLost?.();
    else if (this.#heldOnce) this.options.onRegained?.();
    this.#heldOnce = true;
  }
}
