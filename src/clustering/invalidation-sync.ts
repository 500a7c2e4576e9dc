// Everything that takes invalidations between nodes, put together once: delivery (fan-out, gossip
// batches, pulls) and catch-up (push-pull digests, paged fetches, gaps) over one invalidation log. The
// svc node and the simulator's svc scenarios build exactly this, so the simulator runs the code
// production runs, push-pull included.
import type { Clock, PushPullDelegate } from '../../cluster/index.js';
import { CatchUp, type CatchUpMember, type CaughtUpHow } from './catch-up.js';
import { InvalidationDelivery, type ClusterMode, type DeliveryCounters, type DeliveryMember, type DeliveryPath } from './invalidation-delivery.js';
import type { InvalidationLog } from './invalidation-log.js';
import type { InvalidationMessage } from './invalidation-message.js';

export type SyncMember = DeliveryMember & CatchUpMember;

export interface InvalidationSyncOptions {
  mode: ClusterMode;
  log: InvalidationLog;
  /** Applies an invalidation another node made on this node. */
  apply: (message: InvalidationMessage, path: DeliveryPath) => Promise<void> | void;
  counters: DeliveryCounters;
  /** The member's clock (timers); `now` is the wall clock invalidation times are read on. */
  clock: Clock;
  now: () => number;
  /** Names this life of the node (its gossip outbox). */
  session: string;
  /** The peer timeout: per-peer bound of fan-outs, pulls and catch-up requests. */
  peerTimeoutMs: number;
  /** Distrusts every cached entry fetched before `atMs` (catch-up found a gap). */
  distrustBefore: (atMs: number) => Promise<void>;
  /** Whether the node holds cached entries. */
  holdsEntries: () => boolean;
  onCaughtUp?: (how: CaughtUpHow) => void;
  onError?: (error: unknown) => void;
}

export class InvalidationSync {
  readonly delivery: InvalidationDelivery;
  readonly catchUp: CatchUp;

  constructor(member: SyncMember, options: InvalidationSyncOptions) {
    const { log, clock, now, peerTimeoutMs, onError } = options;
    this.delivery = new InvalidationDelivery({
      member,
      mode: options.mode,
      log,
      apply: options.apply,
      counters: options.counters,
      clock,
      session: options.session,
      httpTimeoutMs: peerTimeoutMs,
      onPullFailed: () => this.catchUp.reconcileWithAPeer(),
      ...(onError ? { onError } : {}),
    });
    this.catchUp = new CatchUp({
      member,
      log,
      receive: (message) => this.delivery.receive(message, 'catchup'),
      clock,
      now,
      distrustBefore: options.distrustBefore,
      holdsEntries: options.holdsEntries,
      requestTimeoutMs: peerTimeoutMs,
      ...(options.onCaughtUp ? { onCaughtUp: options.onCaughtUp } : {}),
      ...(onError ? { onError } : {}),
    });
  }

  /**
   * The push-pull delegate to create the member with: the member comes before the sync, so the
   * delegate reads the sync when an exchange happens (none happens before the member starts).
   */
  static delegate(sync: () => InvalidationSync | undefined): PushPullDelegate {
    return {
      pushPullState: () => sync()?.catchUp.state() ?? new Uint8Array(0),
      mergeRemoteState: (state) => sync()?.catchUp.merge(state),
    };
  }

  /** Serves the cluster channels and starts catching up; `seeds` is how many seeds the node joins. */
  start(seeds: number): void {
    this.delivery.start();
    this.catchUp.start(seeds);
  }

  stop(): void {
    this.delivery.stop();
    this.catchUp.stop();
  }
}
