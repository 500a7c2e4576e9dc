// The primary's side of a node whose data plane runs in several workers (`workers` > 1). The primary
// keeps the admin listener, readiness, the cluster member and the invalidation journal; the workers
// each run a node of their own without an admin listener (worker-main.ts) and share the data-plane
// port, the kernel handing out its connections. This is what the primary's node uses in place of its
// own data-plane listener: starting the workers, reaching every one of them for invalidations,
// metrics, the hot tier's figures, drain and reload, and stopping them.
// docs/decisions.md "Data-plane workers" says why processes, why the kernel, and what is shared.
import { fileURLToPath } from 'node:url';
import type { Registry } from 'prom-client';
import type { InvalidationReplicas } from '../../invalidation/invalidator.js';
import type { CacheCheckResponse } from '../../api/responses.js';
import type { Logger } from '../../observe/logger.js';
import type { LineSink } from './line-relay.js';
import { CACHE_CHECK_CALL, DESCRIBE_CALL, DRAIN_CALL, HOT_TIER_CALL, RELOAD_CALL, type HotTierFigures } from './worker-answers.js';
import { WorkerReplicas } from './worker-invalidation.js';
import type { SharedWarmWrites } from './shared-warm-writes.js';
import type { PeerRelay } from './peer-relay.js';
import type { WorkerMessage } from './worker-messages.js';
import type { WarmStore } from '../../store/warm/warm-store.js';
import { aggregatedExposition, aggregatedRegistry, registryExposition, type Exposition } from './worker-metrics.js';
import { WorkerSupervisor } from './worker-supervisor.js';

export interface DataPlaneWorkersOptions {
  /** Workers to run, at least 2 (1 is the single-process node, without a primary). */
  workers: number;
  /** The configuration file every worker reads, at start and on each reload. */
  configFile: string;
  /** Where the workers' log lines go, whole (the primary's own log output). */
  output: LineSink;
}

const WORKER_MAIN = fileURLToPath(new URL('./worker-main.js', import.meta.url));

/** A drain waits as long as the node's own; a reload is a file read and a few swaps. */
const DRAIN_CALL_TIMEOUT_MS = 35_000;
const RELOAD_CALL_TIMEOUT_MS = 10_000;

export class DataPlaneWorkers {
  #supervisor: WorkerSupervisor | undefined;
  /** What was to be told to every worker before they were forked: they are told as they start. */
  readonly #early = new Map<WorkerMessage['svc'], WorkerMessage>();
  #sharedWarm: { store: WarmStore; writes: SharedWarmWrites } | undefined;
  #peerRelay: PeerRelay | undefined;

  constructor(
    private readonly options: DataPlaneWorkersOptions,
    private readonly logger: Logger,
  ) {}

  /**
   * Forks the workers and resolves with the data-plane URL once every one serves. `onServingChange`
   * hears how many serve whenever one dies or is back: the node is ready while at least one does.
   */
  async start(onServingChange: (serving: number) => void): Promise<string> {
    const { workers, configFile, output } = this.options;
    // The kernel hands out connections: measured 1.39x one process with 2 workers, the primary's
    // round robin 1.10x (bench/listen-mechanisms.ts, docs/decisions.md).
    const sharedWarm = this.#sharedWarm;
    const supervisor = WorkerSupervisor.create({
      workers,
      exec: WORKER_MAIN,
      args: [configFile],
      output,
      logger: this.logger,
      distribution: 'os',
      onServingChange,
      onWarmWrite: sharedWarm && ((write) => sharedWarm.writes.apply(write)),
      // A worker killed while it read leaves its reader slot taken, and lmdb keeps the pages it saw.
      onWorkerExit: sharedWarm && (() => void sharedWarm.store.releaseStaleReaders()),
      onPeerRequest: this.#peerRelay && ((request, reply) => void this.#peerRelay!.answer(request).then(reply)),
    });
    // Invalidations reach the workers from their fork on, not only once all serve.
    this.#supervisor = supervisor;
    for (const message of this.#early.values()) supervisor.announce(message);
    await supervisor.start();
    const described = await this.#supervisor.calls.call<string>(DESCRIBE_CALL, null, { onFailure: 'report' });
    const dataUrl = described.answers[0];
    if (dataUrl === undefined) throw new Error('no data-plane worker said where it listens');
    return dataUrl;
  }

  /**
   * Shares the warm tier this process owns with the workers, who read it directly and send their
   * changes to `writes`. Before start().
   */
  shareWarm(store: WarmStore, writes: SharedWarmWrites): void {
    this.#sharedWarm = { store, writes };
  }

  /**
   * Lets the workers fetch from peers (strong mode): they are told the ring as the node's member sees
   * it, now and on every change, and their requests to peers go through `relay`. Before start().
   */
  relayPeers(relay: PeerRelay): void {
    this.#peerRelay = relay;
    this.#announce({ svc: 'cluster-view', view: relay.view() });
    relay.watch((view) => this.#announce({ svc: 'cluster-view', view }));
  }

  /** Tells every worker, now or forked later, that the shared warm tier is indexed and may be read. */
  warmJoined(): void {
    this.#announce({ svc: 'warm-joined' });
  }

  /** Tells every worker, now or forked later, that the node's cluster member has caught up. */
  clusterCaughtUp(): void {
    this.#announce({ svc: 'caught-up' });
  }

  #announce(message: WorkerMessage): void {
    // One of each kind, the latest: a cluster view replaces the one before (as announce() does).
    if (this.#supervisor === undefined) this.#early.set(message.svc, message);
    else this.#supervisor.announce(message);
  }


  /** Every worker, for the node's invalidation engine to apply each operation in before it answers. */
  replicas(): InvalidationReplicas {
    return new WorkerReplicas(() => this.#supervisor?.calls, this.logger);
  }

  /** `/metrics`: the primary's registry and every worker's, summed. */
  exposition(own: Registry, openMetrics = false): Promise<Exposition> {
    const calls = this.#supervisor?.calls;
    return calls === undefined ? registryExposition(own, openMetrics) : aggregatedExposition(calls, own, openMetrics);
  }

  /** The figures of `/metrics` as prom-client's JSON, for the dashboard. */
  metricsSource(own: Registry): Pick<Registry, 'getMetricsAsJSON'> {
    return {
      getMetricsAsJSON: async () => {
        const calls = this.#supervisor?.calls;
        return calls === undefined ? own.getMetricsAsJSON() : (await aggregatedRegistry(calls, own)).registry.getMetricsAsJSON();
      },
    };
  }

  /**
   * `/v1/debug/cachecheck`: each worker holds its own copy, if any. The answer is that of a worker that
   * would serve the URL as a hit, else of one that holds variants of it, else `fallback`'s.
   */
  async cacheCheck(url: string, fallback: (url: string) => CacheCheckResponse | Promise<CacheCheckResponse>): Promise<CacheCheckResponse> {
    const answers = (await this.#supervisor?.calls.call<CacheCheckResponse>(CACHE_CHECK_CALL, url, { onFailure: 'report' }))?.answers ?? [];
    return answers.find((answer) => answer.hit) ?? answers.find((answer) => answer.variants.length > 0) ?? fallback(url);
  }

  /** The hot tiers of every worker, added up. */
  async hotTier(): Promise<HotTierFigures> {
    const answers = (await this.#supervisor?.calls.call<HotTierFigures>(HOT_TIER_CALL, null, { onFailure: 'report' }))?.answers ?? [];
    return answers.reduce((sum, each) => ({ entries: sum.entries + each.entries, bytes: sum.bytes + each.bytes }), { entries: 0, bytes: 0 });
  }

  /** Every worker stops taking new work; resolves once each drained. */
  async drain(): Promise<void> {
    await this.#supervisor?.calls.call(DRAIN_CALL, null, { onFailure: 'report', timeoutMs: DRAIN_CALL_TIMEOUT_MS });
  }

  /**
   * Every worker reads the configuration file again, after the primary reloaded it: the same checks
   * passed there a moment before. A worker that refuses (the file changed meanwhile) is logged and
   * killed, so that its replacement starts on the file as it is.
   */
  async reload(): Promise<void> {
    const outcome = await this.#supervisor?.calls.call(RELOAD_CALL, null, { onFailure: 'kill', timeoutMs: RELOAD_CALL_TIMEOUT_MS });
    for (const failure of outcome?.failed ?? []) {
      this.logger.error({ worker_id: failure.workerId, reason: failure.reason }, 'a data-plane worker did not reload: killed, it is forked again on the file as it is now');
    }
  }

  /** Workers forked again after one died, since start. */
  get restarts(): number {
    return this.#supervisor?.restarts ?? 0;
  }

  async stop(): Promise<void> {
    await this.#supervisor?.stop();
  }
}
