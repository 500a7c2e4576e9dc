// The main thread's side of a node whose data plane runs in worker threads (`workers` > 1). The main
// thread keeps the admin listener, readiness, the cluster member, the invalidation journal, the warm
// tier and background refresh; the workers each serve the data-plane port (SO_REUSEPORT) from the one
// hot tier they all share (src/store/shared-hot/). This is what the main thread uses in place of a
// data-plane listener of its own: starting the workers, reaching every one of them for invalidations,
// metrics, drain and reload, repairing the hot tier after a worker that died writing it, and stopping.
// docs/decisions.md "Data-plane workers" says why threads, and what is shared.
import type { Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import type { NodeLimitsMemory } from '../node-limits.js';
import { sharedAccessLog, type SharedAccessLog } from '../../observe/access-log.js';
import type { BatchLimits } from '../../observe/tracing/otel-tracer.js';
import type { InvalidationReplicas, ReplicatedInvalidation } from '../../invalidation/invalidator.js';
import type { Logger } from '../../observe/logger.js';
import type { HotMemory } from '../../store/hot-store.js';
import type { SharedHotStore } from '../../store/shared-hot/shared-hot-store.js';
import type { WarmStore } from '../../store/warm/warm-store.js';
import type { ListenerCertificate } from '../../tls/listener-certificates.js';
import type { LineSink } from './line-relay.js';
import type { PeerRelay } from './peer-relay.js';
import type { SharedWarmWrites } from './shared-warm-writes.js';
import type { DownMessage, ServedReport } from './thread-messages.js';
import { aggregatedExposition, aggregatedRegistry, registryExposition, type Exposition } from './worker-metrics.js';
import { WorkerSupervisor } from './worker-supervisor.js';

/** What a worker thread is given to start (its `workerData`, with its slot). */
export interface WorkerStart {
  /** The node's configuration as it is now (a worker started again gets the one in force). */
  config: Config;
  /** The node's hot tier. */
  hotMemory: HotMemory;
  /** Where the data plane listens (a port the main thread checked is free). */
  listen: string;
  /**
   * Listening sockets of the same address an upgraded predecessor handed over, which this worker
   * takes rather than open one (at its first start only: a socket outlives no worker that closed it).
   */
  inherited: number[];
  /** Workers of the node; a key's home worker is its hash modulo this (sibling-routing.ts). */
  workers: number;
  /** The directory of the workers' sibling sockets (0700, the node's own). */
  siblingDir: string;
  /** The node's internal token: a request carrying it came from a sibling worker. */
  siblingToken: string;
  /** A test's clock (SharedClock.memory); the wall clock without one. */
  clock: SharedArrayBuffer | undefined;
  /** The node's counts of origin traffic (node-limits.ts). */
  limits: NodeLimitsMemory;
  /** What the threads share of the access log (hash key, sampling count). */
  accessLog: SharedAccessLog;
  /** A clustered node's serve gate (lease and catch-up, serve-gate.ts), written by the main thread. */
  serveGate: SharedArrayBuffer | undefined;
  /** Whether the node drains (drain-flag.ts), written by the main thread. */
  drainFlag: SharedArrayBuffer;
  /** Tests only: the span export's batching (StartNodeOptions.tracingBatch). */
  tracingBatch: Partial<BatchLimits> | undefined;
  /** `tls`: the certificates in force (a worker started again gets those a reload took); undefined for plain HTTP. */
  certificates: readonly ListenerCertificate[] | undefined;
}

export interface DataPlaneWorkersOptions {
  /** Workers to run, at least 2 (1 is the single-thread node). */
  workers: number;
  /** The configuration in force, read when a worker starts. */
  config: () => Config;
  /** The environment the workers see (the node's). */
  env: NodeJS.ProcessEnv;
  clock: SharedArrayBuffer | undefined;
  /** Where the workers' log lines go, whole (the main thread's log output). */
  output: LineSink;
  /** The node's hot tier, which the main thread repairs after a worker that died writing it. */
  hot: SharedHotStore;
  /** The configured data-plane address. */
  listen: string;
  siblingDir: string;
  siblingToken: string;
  limits: NodeLimitsMemory;
  serveGate: SharedArrayBuffer | undefined;
  drainFlag: SharedArrayBuffer;
  tracingBatch: Partial<BatchLimits> | undefined;
  /** The data plane's certificates in force, read when a worker starts. */
  certificates: () => readonly ListenerCertificate[] | undefined;
  /** Told of each worker that exited (its slot and thread), after the hot tier was repaired. */
  onWorkerExit: (slot: number, threadId: number) => void;
}

const WORKER_MAIN = new URL('./worker-main.js', import.meta.url);

/** A drain waits as long as the node's own; a reload is a file read and a few swaps. */
const DRAIN_CALL_TIMEOUT_MS = 35_000;
const RELOAD_CALL_TIMEOUT_MS = 10_000;

export class DataPlaneWorkers {
  readonly #supervisor: WorkerSupervisor;
  #sharedWarm: { store: WarmStore; writes: SharedWarmWrites } | undefined;
  #peerRelay: PeerRelay | undefined;
  #onServed: ((report: ServedReport) => void) | undefined;
  #listen: string;
  #onServingChange: (serving: number) => void = () => undefined;
  /** Per slot, the handed-over sockets its worker takes at its first start (none after: one that ended closed them). */
  readonly #inherited = new Map<number, number[]>();
  readonly #workers: number;
  readonly #accessLog = sharedAccessLog();

  constructor(
    options: DataPlaneWorkersOptions,
    private readonly logger: Logger,
  ) {
    this.#listen = options.listen;
    this.#workers = options.workers;
    const data = (slot: number): WorkerStart => ({
      config: options.config(),
      clock: options.clock,
      hotMemory: options.hot.memory,
      listen: this.#listen,
      inherited: this.#claim(slot),
      workers: options.workers,
      siblingDir: options.siblingDir,
      siblingToken: options.siblingToken,
      limits: options.limits,
      accessLog: this.#accessLog,
      serveGate: options.serveGate,
      drainFlag: options.drainFlag,
      tracingBatch: options.tracingBatch,
      certificates: options.certificates(),
    });
    this.#supervisor = new WorkerSupervisor({
      workers: options.workers,
      module: WORKER_MAIN,
      data: (slot) => ({ ...data(slot) }),
      env: options.env,
      output: options.output,
      logger,
      onServingChange: (serving) => this.#onServingChange(serving),
      onWarmWrite: (write) => this.#sharedWarm?.writes.apply(write),
      onServed: (report) => this.#onServed?.(report),
      onWorkerExit: (slot, threadId) => {
        // A worker that died inside a write to the hot tier left its lock taken.
        if (options.hot.repairAfter(threadId)) logger.warn({ thread: threadId }, 'a data-plane worker died writing the hot tier: repaired');
        options.onWorkerExit(slot, threadId);
        void this.#sharedWarm?.store.releaseStaleReaders();
      },
      onPeerRequest: (request, reply) => void this.#peerRelay?.answer(request).then(reply),
    });
  }

  /**
   * Starts the workers on `address` (a port, not 0) and resolves with the data-plane URL once every
   * one serves. `inherited`: listening sockets of that address an upgraded predecessor handed over;
   * slot i takes the sockets i, i + workers, …, so every one is taken whatever the two counts, and a
   * slot without one opens its own beside them (SO_REUSEPORT), as every slot does when the
   * predecessor handed none (SVC_NODE_INTERNALS=off).
   */
  async start(address: string, inherited: readonly number[] = []): Promise<string> {
    this.#listen = address;
    inherited.forEach((fd, index) => {
      const slot = index % this.#workers;
      this.#inherited.set(slot, [...(this.#inherited.get(slot) ?? []), fd]);
    });
    await this.#supervisor.start();
    const described = await this.#supervisor.calls.call('describe', null, { onFailure: 'report' });
    const url = described.answers[0];
    if (url === undefined) throw new Error('no data-plane worker said where it listens');
    return url;
  }

  /** Told how many workers serve whenever one dies or is back: the node is ready while one does. */
  onServingChange(listener: (serving: number) => void): void {
    this.#onServingChange = listener;
  }

  /** The workers read the warm tier this thread owns directly, and send their changes to `writes`. Before start(). */
  shareWarm(store: WarmStore, writes: SharedWarmWrites): void {
    this.#sharedWarm = { store, writes };
    // What a worker sent before it answers a call has arrived once the answer has (one channel).
    store.setRemoteWriters(async () => (await this.#supervisor.calls.call('barrier', null, { onFailure: 'report' })).failed.length === 0);
  }

  /** Where the workers' hits on refresh-enabled routes go (the background refresher). */
  onServed(handler: (report: ServedReport) => void): void {
    this.#onServed = handler;
  }

  /**
   * Lets the workers fetch from peers (strong mode): they are told the ring as the node's member sees
   * it, now and on every change, and their requests to peers go through `relay`. Before start().
   */
  relayPeers(relay: PeerRelay): void {
    this.#peerRelay = relay;
    this.#announce({ kind: 'cluster-view', view: relay.view() });
    relay.watch((view) => this.#announce({ kind: 'cluster-view', view }));
  }

  #announce(message: DownMessage): void {
    this.#supervisor.announce(message);
  }

  /** Every worker, for the node's invalidation engine to apply each operation in before it answers. */
  replicas(): InvalidationReplicas {
    return {
      apply: async (invalidation: ReplicatedInvalidation): Promise<number> => {
        const outcome = await this.#supervisor.calls.call('invalidate', invalidation, { onFailure: 'terminate' });
        for (const failure of outcome.failed) {
          this.logger.error({ thread: failure.threadId, reason: failure.reason, type: invalidation.type }, 'a data-plane worker did not apply an invalidation: terminated, it is started again');
        }
        return outcome.answers.reduce((sum, count) => sum + count, 0);
      },
    };
  }

  /** `/metrics`: the main thread's registry and every worker's, summed. */
  exposition(own: Registry, openMetrics = false): Promise<Exposition> {
    return this.#supervisor.readyCount === 0 && this.#supervisor.threadIds().every((id) => id === undefined)
      ? registryExposition(own, openMetrics)
      : aggregatedExposition(this.#supervisor.calls, own, openMetrics);
  }

  /** The figures of `/metrics` as prom-client's JSON, for the dashboard. */
  metricsSource(own: Registry): Pick<Registry, 'getMetricsAsJSON'> {
    return { getMetricsAsJSON: async () => (await aggregatedRegistry(this.#supervisor.calls, own)).registry.getMetricsAsJSON() };
  }

  /** Resolves once every worker's hits served so far have reached onServed's handler. */
  async gatherServed(): Promise<void> {
    // A worker's report goes out before its answer, on the same channel: it arrives first.
    await this.#supervisor.calls.call('report', null, { onFailure: 'report' });
  }

  /** Resolves once every worker's in-flight requests are done (the drain flag stopped their keep-alive). */
  async drain(): Promise<void> {
    await this.#supervisor.calls.call('drain', null, { onFailure: 'report', timeoutMs: DRAIN_CALL_TIMEOUT_MS });
  }

  /**
   * Every worker applies the configuration the main thread just reloaded. A worker that refuses is
   * logged and terminated, so that its replacement starts on the configuration in force.
   */
  async reload(config: Config): Promise<void> {
    const outcome = await this.#supervisor.calls.call('reload', config, { onFailure: 'terminate', timeoutMs: RELOAD_CALL_TIMEOUT_MS });
    for (const failure of outcome.failed) {
      this.logger.error({ thread: failure.threadId, reason: failure.reason }, 'a data-plane worker did not reload: terminated, it starts again on the file as it is now');
    }
  }

  /**
   * Every worker serves these certificates to its new connections (a reload took them). A worker that
   * fails to is logged and terminated: its replacement starts with them.
   */
  async setCertificates(certificates: readonly ListenerCertificate[]): Promise<void> {
    const outcome = await this.#supervisor.calls.call('certificates', certificates.map(({ cert, key, names }) => ({ cert, key, names: [...names] })), { onFailure: 'terminate', timeoutMs: RELOAD_CALL_TIMEOUT_MS });
    for (const failure of outcome.failed) {
      this.logger.error({ thread: failure.threadId, reason: failure.reason }, 'a data-plane worker did not take the new certificates: terminated, it starts again with them');
    }
  }

  #claim(slot: number): number[] {
    const sockets = this.#inherited.get(slot) ?? [];
    this.#inherited.delete(slot);
    return sockets;
  }

  /** The descriptors of every worker's data-plane listening sockets, for an upgrade's successor. */
  async listeningFds(): Promise<number[]> {
    const outcome = await this.#supervisor.calls.call('sockets', null, { onFailure: 'report' });
    if (outcome.failed.length > 0) throw new Error(`${outcome.failed.length} data-plane worker(s) did not say which sockets they listen on`);
    return outcome.answers.flat();
  }

  /**
   * After an upgrade handed the sockets over: every worker stops taking connections; resolves true
   * once their connections ended, false when one was still open after `timeoutMs`.
   */
  async stopAccepting(timeoutMs: number): Promise<boolean> {
    const outcome = await this.#supervisor.calls.call('stopAccepting', timeoutMs, { onFailure: 'report', timeoutMs: timeoutMs + 1_000 });
    return outcome.failed.length === 0 && outcome.answers.every(Boolean);
  }

  /** Workers started again after one died, since start. */
  get restarts(): number {
    return this.#supervisor.restarts;
  }

  /** The supervisor, for tests of crash containment. */
  get supervisor(): WorkerSupervisor {
    return this.#supervisor;
  }

  async stop(): Promise<void> {
    await this.#supervisor.stop();
  }
}
