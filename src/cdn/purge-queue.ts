// The CDN purges on their way out: batched, one call at a time, never forgotten.
//
// - Batching: a purge queued while the sender is idle waits BATCH_WINDOW_MS for others, then every
//   queued purge goes out in as few calls as the per-call limit allows, one purge kind per call, oldest
//   kind first. A kind with a full call's worth queued goes at once. A purge queued while a call is
//   out joins the next one. So a batch purge of 1,000 URLs makes ceil(1000 / 30) = 34 calls.
// - Outcomes: a confirmed call forgets its purges. A call whose retries ran out (429, 5xx, network)
//   keeps them, and the sender cools down (30 s, doubling to 5 min, at least what a Retry-After asked)
//   before it tries again. A call the CDN refused for its content (another 4xx) drops them: the same
//   request cannot succeed. A call refused for its credentials or zone (401, 403, 404) keeps them and
//   stops the sender until the node restarts with a working token: they go out then.
// - Waiting: with `cdn.async: false` the admin request waits for the calls carrying its purges; it is
//   failed at once while the sender cools down or is stopped, since no call would go out for it.
import type { SetTimer, CancelTimer } from '../runtime/timers.js';
import type { CallResult, FailedCall } from '../http/call-result.js';
import { MAX_VALUES_PER_CALL } from './cloudflare-client.js';
import type { PendingPurge, PendingPurges } from './pending-purges.js';
import type { CdnOperation, PurgeKind, PurgeTarget } from './purge-mapping.js';
import type { SentCall } from './send-with-retries.js';

/** How long an idle sender waits for more purges to share a call: short next to the CDN's own latency. */
export const BATCH_WINDOW_MS = 100;
/** Purges pending at most; past it an invalidation is not queued (counted, `reason="queue_full"`). */
export const MAX_PENDING_PURGES = 100_000;
/** The first cool-down after a call ran out of retries; it doubles with each failure in a row. */
export const COOL_DOWN_BASE_MS = 30_000;
export const COOL_DOWN_MAX_MS = 5 * 60_000;
/** Statuses that refuse the credentials or the zone, not the purge: fixing the config makes them go. */
const CONFIG_REFUSALS = new Set([401, 403, 404]);

/** What became of one call's purges. */
export type CallFate =
  | 'confirmed' // the CDN purged them
  | 'kept' // retries ran out: still pending, sent again after the cool-down
  | 'dropped' // the CDN refused them (another 4xx): forgotten
  | 'halted'; // the CDN refused the token or zone: still pending, the sender stopped until restart

export interface CallReport {
  kind: PurgeKind;
  /** The distinct values the call carried. */
  values: string[];
  /** The operations whose purges it carried (label `operation`). */
  operations: CdnOperation[];
  result: Exclude<CallResult, { outcome: 'aborted' }>;
  retries: number;
  fate: CallFate;
  durationMs: number;
  /** For `kept`: when the sender tries again, ms from now. */
  coolDownMs?: number;
}

export interface PurgeQueueOptions {
  store: PendingPurges;
  /** What the store held at startup, oldest first: sent first. */
  initial: readonly PendingPurge[];
  /** One call with its retries. */
  send: (kind: PurgeKind, values: readonly string[], signal: AbortSignal) => Promise<SentCall>;
  onCall: (report: CallReport) => void;
  /** The pending journal could not be written: the sender stops (what is pending stays on disk). */
  onError: (error: unknown) => void;
  setTimer: SetTimer;
  now: () => number;
  /** Monotonic ms, for call durations. */
  monotonicNow: () => number;
  maxPending?: number;
}

interface Queued extends PendingPurge {
  waiters: Set<Waiter>;
}

/** One admin request waiting for its purges (sync mode). */
class Waiter {
  #remaining: number;
  #settled = false;
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (error: Error) => void;

  constructor(count: number) {
    this.#remaining = count;
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // No purge to wait for (an empty list): nothing can confirm it, so it is confirmed now.
    if (count === 0) this.#settle();
  }

  confirmOne(): void {
    if (--this.#remaining === 0) this.#settle();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve();
  }

  fail(reason: string): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(new Error(reason));
  }
}

function keyOf(target: PurgeTarget): string {
  return `${target.kind} ${target.value}`;
}

export class PurgeQueue {
  readonly #options: PurgeQueueOptions;
  readonly #maxPending: number;
  /** Purges not out in a call, by kind, oldest first. */
  readonly #queued = new Map<PurgeKind, Map<number, Queued>>();
  /** The queued (not sending) purge of each kind and value, so a repeated one shares it. */
  readonly #byKey = new Map<string, Queued>();
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #timer: CancelTimer | undefined;
  /** Set while the sender cools down after a failure; the reason a waiter is told. */
  #coolingDown: string | undefined;
  #failuresInRow = 0;
  #halted: string | undefined;
  #stopped = false;

  constructor(options: PurgeQueueOptions) {
    this.#options = options;
    this.#maxPending = options.maxPending ?? MAX_PENDING_PURGES;
    for (const purge of options.initial) this.#enqueue({ ...purge, waiters: new Set() });
    if (options.initial.length > 0) this.#schedule();
  }

  /** Purges pending: queued or out in a call. */
  get size(): number {
    return this.#options.store.size;
  }

  /**
   * Queues targets (durably when the store is) and resolves once they are recorded: undefined when
   * the queue is full, else a promise of their confirmation when `wait` is set (rejected with the
   * reason the CDN did not confirm), or nothing to wait for.
   */
  async add(targets: readonly PurgeTarget[], wait: boolean): Promise<{ confirmed: Promise<void> | undefined } | undefined> {
    if (this.size + targets.length > this.#maxPending) return undefined;
    const fresh: PurgeTarget[] = [];
    const shared: Queued[] = [];
    for (const target of targets) {
      const existing = this.#byKey.get(keyOf(target));
      // The same purge still waiting to go out covers this one too: it will be sent after both.
      if (existing !== undefined && !shared.includes(existing)) shared.push(existing);
      else if (existing === undefined) fresh.push(target);
    }
    // A shared purge may go out while the new ones are written: its waiter must be on it already.
    const waiter = wait ? new Waiter(shared.length + fresh.length) : undefined;
    if (waiter) for (const purge of shared) purge.waiters.add(waiter);
    const added = (await this.#options.store.add(fresh, this.#options.now())).map((purge) => ({ ...purge, waiters: new Set<Waiter>() }));
    for (const purge of added) {
      if (waiter) purge.waiters.add(waiter);
      this.#enqueue(purge);
    }
    const blocked = this.#halted ?? this.#coolingDown ?? (this.#stopped ? 'the node is stopping' : undefined);
    if (blocked !== undefined) waiter?.fail(`${blocked}; the purge stays pending`);
    this.#schedule();
    return { confirmed: waiter?.done };
  }

  /** Stops sending: a call under way is abandoned; its purges stay pending (on disk when durable). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.();
    this.#timer = undefined;
    this.#abort.abort();
    await this.#running;
    this.#failQueued('the node stopped; the purge stays pending');
  }

  #enqueue(purge: Queued): void {
    let bySeq = this.#queued.get(purge.kind);
    if (bySeq === undefined) this.#queued.set(purge.kind, (bySeq = new Map()));
    bySeq.set(purge.seq, purge);
    if (!this.#byKey.has(keyOf(purge))) this.#byKey.set(keyOf(purge), purge);
  }

  /** Starts the sender: at once when a call would be full, else after the batch window. */
  #schedule(): void {
    if (this.#running !== undefined || this.#stopped || this.#halted !== undefined || this.#coolingDown !== undefined) return;
    const full = [...this.#queued.values()].some((bySeq) => bySeq.size >= MAX_VALUES_PER_CALL);
    if (full) {
      this.#timer?.();
      this.#timer = undefined;
      this.#start();
    } else if (this.#timer === undefined && [...this.#queued.values()].some((bySeq) => bySeq.size > 0)) {
      this.#timer = this.#options.setTimer(() => {
        this.#timer = undefined;
        this.#start();
      }, BATCH_WINDOW_MS);
    }
  }

  #start(): void {
    if (this.#running !== undefined || this.#stopped) return;
    this.#running = this.#sendAll()
      .catch((error: unknown) => {
        this.#halted = 'the pending-purge journal could not be written';
        this.#failQueued(this.#halted);
        this.#options.onError(error);
      })
      .finally(() => {
        this.#running = undefined;
        this.#schedule();
      });
  }

  async #sendAll(): Promise<void> {
    for (;;) {
      if (this.#stopped || this.#halted !== undefined || this.#coolingDown !== undefined) return;
      const call = this.#takeCall();
      if (call === undefined) return;
      const startedMs = this.#options.monotonicNow();
      const values = [...new Set(call.map((purge) => purge.value))];
      const sent = await this.#options.send(call[0]!.kind, values, this.#abort.signal);
      if (sent.result.outcome === 'aborted') {
        this.#putBack(call);
        return;
      }
      await this.#settle(call, values, sent.result, sent.retries, this.#options.monotonicNow() - startedMs);
    }
  }

  /** The oldest queued purge's kind, and up to a call's worth of values of that kind, oldest first. */
  #takeCall(): Queued[] | undefined {
    let oldest: Queued | undefined;
    for (const bySeq of this.#queued.values()) {
      const first = bySeq.values().next().value;
      if (first !== undefined && (oldest === undefined || first.seq < oldest.seq)) oldest = first;
    }
    if (oldest === undefined) return undefined;
    const bySeq = this.#queued.get(oldest.kind)!;
    const call: Queued[] = [];
    const values = new Set<string>();
    for (const purge of bySeq.values()) {
      if (!values.has(purge.value) && values.size === MAX_VALUES_PER_CALL) break;
      values.add(purge.value);
      call.push(purge);
    }
    for (const purge of call) {
      bySeq.delete(purge.seq);
      if (this.#byKey.get(keyOf(purge)) === purge) this.#byKey.delete(keyOf(purge));
    }
    return call;
  }

  /** Returns a call's purges to the front of their kind's queue. */
  #putBack(call: Queued[]): void {
    const kind = call[0]!.kind;
    const rest = this.#queued.get(kind) ?? new Map<number, Queued>();
    const merged = new Map<number, Queued>(call.map((purge) => [purge.seq, purge]));
    for (const [seq, purge] of rest) merged.set(seq, purge);
    this.#queued.set(kind, merged);
    for (const purge of call) if (!this.#byKey.has(keyOf(purge))) this.#byKey.set(keyOf(purge), purge);
  }

  async #settle(call: Queued[], values: string[], result: Exclude<CallResult, { outcome: 'aborted' }>, retries: number, durationMs: number): Promise<void> {
    const report: CallReport = {
      kind: call[0]!.kind,
      values,
      operations: [...new Set(call.map((purge) => purge.operation))],
      result,
      retries,
      durationMs,
      fate: 'confirmed',
    };
    if (result.outcome === 'ok') {
      this.#failuresInRow = 0;
      await this.#forget(call);
      for (const purge of call) for (const waiter of purge.waiters) waiter.confirmOne();
    } else if (result.outcome === 'refused' && !CONFIG_REFUSALS.has(result.status)) {
      report.fate = 'dropped';
      await this.#forget(call);
      this.#fail(call, `the CDN refused it: ${result.message}`);
    } else if (result.outcome === 'refused') {
      report.fate = 'halted';
      this.#putBack(call);
      this.#halted = `the CDN refused the token or zone (${result.message}); purges stay pending until the node restarts`;
      this.#failQueued(this.#halted);
    } else {
      report.fate = 'kept';
      report.coolDownMs = this.#coolDownMs(result);
      this.#putBack(call);
      this.#coolingDown = `the CDN failed: ${result.message}`;
      // No call goes out before the cool-down ends: nobody waits that long for an answer.
      this.#failQueued(`${this.#coolingDown}; the purge stays pending`);
      this.#timer = this.#options.setTimer(() => {
        this.#timer = undefined;
        this.#coolingDown = undefined;
        this.#schedule();
      }, report.coolDownMs);
    }
    this.#options.onCall(report);
  }

  async #forget(call: Queued[]): Promise<void> {
    await this.#options.store.done(call.map((purge) => purge.seq));
  }

  #fail(purges: Iterable<Queued>, reason: string): void {
    for (const purge of purges) {
      for (const waiter of purge.waiters) waiter.fail(reason);
      purge.waiters.clear();
    }
  }

  /** Fails the waiters of every purge still queued (a call's purges are back in the queue by then). */
  #failQueued(reason: string): void {
    for (const bySeq of this.#queued.values()) this.#fail(bySeq.values(), reason);
  }

  #coolDownMs(result: FailedCall): number {
    this.#failuresInRow++;
    const backoff = Math.min(COOL_DOWN_MAX_MS, COOL_DOWN_BASE_MS * 2 ** (this.#failuresInRow - 1));
    return result.outcome === 'rate_limited' && result.retryAfterMs !== undefined ? Math.max(backoff, result.retryAfterMs) : backoff;
  }
}
