// svc's invalidation stack on every member of a simulated cluster: the real ClusterInvalidator,
// InvalidationSync (delivery, gossip batches, pulls, catch-up over push-pull) and invalidation log,
// with a recording engine in place of the cache (what it was asked to invalidate, as of when). What
// a node keeps on disk (its log, what its engine applied, whether its tiers hold entries) outlives a
// simulated crash and restart, as a warm tier and the journals do.
//
// The engine and the log store tell the simulated clock that async work started, so the promise chains
// they begin (apply, then record, then send) run at the virtual time they began, as they would take
// microseconds for real, instead of one step per virtual millisecond.
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { sealTransport, type ClusterMember, type SealedTransport, type Transport } from '../../../cluster/index.js';
import { SimCluster, type SimClusterOptions } from '../../../sim/sim-cluster.js';
import type { ActiveBan, BanSpec, BatchResult, InvalidationOrigin, InvalidationResult, InvalidationType, Invalidator, UrlInvalidationResult } from '../../invalidation/invalidator.js';
import { normaliseBanSpec } from '../../invalidation/ban.js';
import { ClusterInvalidator, applyRemoteInvalidation } from '../cluster-invalidator.js';
import type { CaughtUpHow } from '../catch-up.js';
import type { ClusterMode, DeliveryCounters, DeliveryPath } from '../invalidation-delivery.js';
import { InvalidationLog, type LogRecord } from '../invalidation-log.js';
import type { InvalidationMessage } from '../invalidation-message.js';
import { InvalidationSync } from '../invalidation-sync.js';
import { MemoryLogStore } from '../log-stores.js';
import { ServeGate } from '../serve-gate.js';
import { ServeGuard } from '../serve-guard.js';

/** One invalidation a node's engine was asked to apply. */
export interface EngineCall {
  type: InvalidationType;
  id: string;
  /** What it invalidates: the URL, the batch's URLs one per line, or the ban's fields as JSON. */
  target: string;
  /** The time it takes effect from, as handed to the engine. */
  atMs: number;
  /** Virtual time of the call. */
  calledMs: number;
}

/** An engine that records what it is asked to do; it stands for the cache and its journal. */
export class RecordingEngine implements Invalidator {
  readonly calls: EngineCall[] = [];
  /** Times before which everything is distrusted (catch-up gaps). */
  readonly gapsBeforeMs: number[] = [];

  constructor(
    private readonly now: () => number,
    private readonly onCall: () => void,
  ) {}

  private record(type: InvalidationType, target: string, origin: InvalidationOrigin | undefined): InvalidationResult {
    this.onCall();
    const atMs = origin?.atMs ?? this.now();
    this.calls.push({ type, id: origin?.id ?? 'local', target, atMs, calledMs: this.now() });
    return { count: 0 };
  }

  purge(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult> {
    return Promise.resolve({ ...this.record('purge', url, origin), keys: [] });
  }

  purgeBatch(urls: readonly string[], origin?: InvalidationOrigin): Promise<BatchResult> {
    return Promise.resolve({ ...this.record('purge_batch', urls.join('\n'), origin), failed: 0 });
  }

  ban(spec: BanSpec, origin?: InvalidationOrigin): Promise<InvalidationResult> {
    return Promise.resolve(this.record('ban', JSON.stringify(normaliseBanSpec(spec)), origin));
  }

  refresh(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult> {
    return Promise.resolve({ ...this.record('refresh', url, origin), keys: [] });
  }

  isInvalidated(): boolean {
    return false;
  }

  activeBans(): ActiveBan[] {
    return [];
  }

  matchingBans(): ActiveBan[] {
    return [];
  }

  recent(): [] {
    return [];
  }

  counts(): Record<InvalidationType, number> {
    const counts = { purge: 0, purge_batch: 0, ban: 0, refresh: 0 };
    for (const call of this.calls) counts[call.type] += 1;
    return counts;
  }

  /** Calls for `id` (a node applies each invalidation once, over all its lives). */
  callsFor(id: string): EngineCall[] {
    return this.calls.filter((call) => call.id === id);
  }
}

/** A log store in memory that wakes the simulated clock's continuation drain, like the engine. */
class SimLogStore extends MemoryLogStore {
  constructor(private readonly onCall: () => void) {
    super();
  }

  override append(records: readonly LogRecord[]): Promise<void> {
    this.onCall();
    return super.append(records);
  }
}

/** What one node keeps across simulated restarts. */
export interface SimNodeDisk {
  readonly engine: RecordingEngine;
  readonly store: MemoryLogStore;
  /** Whether its tiers hold entries (a node that cached something before it went away). */
  holdsEntries: boolean;
}

/** One life of a node: from a start to a crash or restart. */
export interface SimNodeLife {
  readonly index: number;
  readonly startedMs: number;
  readonly member: ClusterMember;
  readonly sync: InvalidationSync;
  readonly log: InvalidationLog;
  readonly invalidator: ClusterInvalidator;
  /** What it may serve from its cache, with leases (options.leaseMs): its serve gate and its guard. */
  readonly serving: { gate: ServeGate; guard: ServeGuard } | undefined;
  caughtUp: (CaughtUpHow & { atMs: number }) | undefined;
  readonly errors: string[];
}

export interface SvcSimNodesOptions {
  mode: ClusterMode;
  peerTimeoutMs?: number;
  /** Called for every invalidation a node applies from another, with the path that brought it. */
  onApplied?: (index: number, message: InvalidationMessage, path: DeliveryPath) => void;
  /** What delivery counts, per node (the metrics of spec §6.5 in svc). */
  counters?: (index: number) => DeliveryCounters;
  /** The cluster secret: every member's transport is sealed with it (nonces from the run's seed). */
  secret?: Uint8Array;
  /** Runs svc's leases and serve gate (serve-guard.ts) on every node, with this lease. */
  leaseMs?: number;
}

const noCounters = { http: () => undefined, gossip: () => undefined, failure: () => undefined };

export class SvcSimNodes {
  readonly disks: SimNodeDisk[];
  readonly lives: (SimNodeLife | undefined)[];
  /** Each node's sealed transport (current life), with a secret. */
  readonly sealed: (SealedTransport | undefined)[] = [];
  /** Seeds each node joins through in its current life (node 0 bootstraps alone, the others through it). */
  private readonly seeds: number[];
  private idCounter = 0;
  readonly cluster: SimCluster;

  /** A simulated cluster whose every member runs svc's invalidation stack. */
  constructor(
    clusterOptions: SimClusterOptions,
    private readonly options: SvcSimNodesOptions,
  ) {
    const secret = options.secret;
    const nonces = clusterOptions.random.fork('nonces');
    const cluster = new SimCluster({
      ...clusterOptions,
      ...(secret === undefined
        ? {}
        : {
            wrapTransport: (transport: Transport, index: number) => {
              const sealed = sealTransport(transport, {
                secrets: [secret],
                nonces: (target) => {
                  for (let i = 0; i < target.length; i++) target[i] = nonces.int(256);
                },
              });
              this.sealed[index] = sealed;
              return sealed;
            },
          }),
      // Each member's push-pull delegate reads its current life's sync when an exchange happens.
      memberOptions: (index) => ({ ...clusterOptions.memberOptions?.(index), delegate: InvalidationSync.delegate(() => this.lives[index]?.sync) }),
    });
    this.cluster = cluster;
    const now = (): number => cluster.clock.now();
    const wake = (): void => cluster.network.noteAsyncWork();
    this.disks = cluster.names.map(() => ({ engine: new RecordingEngine(now, wake), store: new SimLogStore(wake), holdsEntries: false }));
    this.lives = cluster.names.map(() => undefined);
    this.seeds = cluster.names.map((_, index) => (index === 0 ? 0 : 1));
    cluster.onMember((index, member) => this.startLife(index, member));
  }

  /**
   * Lets the promise chains a scenario started between clock runs (an operation at a node) go as far
   * as they can at the current virtual time, as the clock's own drain does after an event.
   */
  async settle(): Promise<void> {
    await nextMacrotask();
  }

  /**
   * Runs the clock until every one of `work` has settled (they wait on simulated traffic), at most
   * `budgetMs`; resolves to whether they all did.
   */
  async finish(work: readonly Promise<unknown>[], budgetMs = 60_000): Promise<boolean> {
    let settled = 0;
    for (const promise of work) promise.then(() => settled++, () => settled++);
    await this.settle();
    return (await this.cluster.waitFor(() => settled === work.length, 10, budgetMs)) !== null;
  }

  life(index: number): SimNodeLife {
    const life = this.lives[index];
    if (life === undefined) throw new RangeError(`node ${index} was never started`);
    return life;
  }

  /** Restarts node `index` with what it kept on disk, joining through `seedIndexes`. */
  async restart(index: number, seedIndexes: readonly number[]): Promise<void> {
    this.lives[index]?.sync.stop();
    this.lives[index]?.serving?.guard.stop();
    this.seeds[index] = seedIndexes.length;
    await this.cluster.restart(index, seedIndexes);
  }

  crash(index: number): void {
    this.lives[index]?.sync.stop();
    this.lives[index]?.serving?.guard.stop();
    this.cluster.crash(index);
  }

  private startLife(index: number, member: ClusterMember): void {
    const { cluster } = this;
    const { mode } = this.options;
    const disk = this.disks[index]!;
    const now = (): number => cluster.clock.now();
    const log = InvalidationLog.restore(disk.store.records, { store: disk.store, keyOf: (url) => url, now });
    const name = cluster.names[index]!;
    const lifeNumber = this.idCounter++;
    let counter = 0;
    const errors: string[] = [];
    const node: { life?: SimNodeLife } = {};
    const sync = new InvalidationSync(member, {
      mode,
      log,
      apply: async (message, path) => {
        await applyRemoteInvalidation(disk.engine, message, now());
        this.options.onApplied?.(index, message, path);
      },
      counters: this.options.counters?.(index) ?? noCounters,
      clock: cluster.network.node(cluster.addresses[index]!).clock,
      now,
      session: `${name}.${lifeNumber}`,
      peerTimeoutMs: this.options.peerTimeoutMs ?? 1_000,
      distrustBefore: (atMs) => {
        disk.engine.gapsBeforeMs.push(atMs);
        return Promise.resolve();
      },
      holdsEntries: () => disk.holdsEntries,
      onCaughtUp: (how) => {
        node.life?.serving?.gate.open();
        if (node.life !== undefined) node.life.caughtUp = { ...how, atMs: now() };
      },
      onError: (error) => errors.push(String(error)),
    });
    const serving = this.options.leaseMs === undefined ? undefined : this.guarded(member, sync, index, this.options.leaseMs);
    const invalidator = new ClusterInvalidator({
      local: disk.engine,
      delivery: sync.delivery,
      mode,
      newId: () => `${name}.${lifeNumber}.${counter++}`,
      now,
      onPublishError: (error) => errors.push(String(error)),
      outlastLeases: serving && (async (missed) => void (await serving.guard.outlast(missed))),
    });
    node.life = { index, startedMs: now(), member, sync, log, invalidator, serving, caughtUp: undefined, errors };
    this.lives[index] = node.life;
    sync.start(this.seeds[index]!);
    serving?.guard.start();
  }

  /** A serve gate and guard for one life of node `index`, on its own clock, as svc's node has them. */
  private guarded(member: ClusterMember, sync: InvalidationSync, index: number, leaseMs: number): { gate: ServeGate; guard: ServeGuard } {
    const clock = this.cluster.network.node(this.cluster.addresses[index]!).clock;
    const gate = ServeGate.create(clock.now(), () => clock.now());
    const guard = new ServeGuard({
      member,
      mode: this.options.mode,
      leaseMs,
      clock,
      now: () => clock.now(),
      gate,
      gateTime: (clockMs) => clockMs,
      catchUpAgain: (required, sinceMs) => sync.catchUp.again(required, sinceMs),
    });
    return { gate, guard };
  }
}
