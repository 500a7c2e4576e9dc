// The contract between a node's control plane (svc-node.ts) and what serves its data plane: the
// options a node starts with, what the control plane has built when it asks the data side to build
// itself, and the data side as the control plane uses it. Its two implementations are
// single-thread-side.ts and worker-threads-side.ts.
import type { Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import type { NodeMetrics } from '../../observe/metrics.js';
import type { BatchLimits } from '../../observe/tracing/otel-tracer.js';
import type { Logger } from '../../observe/logger.js';
import type { Readiness } from '../../observe/readiness.js';
import type { WarmStore } from '../../store/warm/warm-store.js';
import type { TieredCache } from '../../store/tiered-cache.js';
import type { CacheEntry } from '../../cache/entry.js';
import type { HeaderLookup } from '../../cache/policy/header-lookup.js';
import type { InvalidationEngine } from '../../invalidation/create-invalidator.js';
import type { InvalidationReplicas } from '../../invalidation/invalidator.js';
import type { RetryTiming } from '../../cdn/send-with-retries.js';
import type { BackgroundRefresher } from '../../refresh/background-refresher.js';
import type { ClusterNode } from '../../clustering/cluster-node.js';
import type { Exposition } from '../workers/worker-metrics.js';
import type { LineSink } from '../workers/line-relay.js';
import type { DrainFlag } from '../drain-flag.js';
import type { Teardown } from '../teardown.js';
import type { HandedSockets, Successor } from '../upgrade-successor.js';
import type { ReloadStep } from '../reload/config-reloader.js';
import type { ReloadableParts } from '../reload/node-reload-steps.js';
import type { SharedClock } from '../shared-clock.js';
import type { NodeCertificates } from '../node-certificates.js';

export interface StartNodeOptions {
  config: Config;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /**
   * Tests only: a clock they move, which every thread of the node reads (a test's `now` function
   * could not reach the worker threads).
   */
  clock?: SharedClock;
  /** Tests only: the CDN propagation's timers and jitter, so its waits are seen without being spent. */
  cdnTiming?: Partial<RetryTiming>;
  /** The file `config` was read from: with it the node can reload (`reload()`, `POST /v1/reload`). */
  configFile?: string;
  /** Reload steps of the caller's own parts (`svc serve` owns the log format). */
  reloadSteps?: readonly ReloadStep[];
  /** Tests only: the span export's batching, so a full queue or a failed export is seen quickly. */
  tracingBatch?: Partial<BatchLimits>;
  /** Where the data-plane worker threads' log lines go, whole; standard output by default. */
  workerOutput?: LineSink;
  /**
   * This process was started by an upgrading predecessor, whose sockets and directory the node takes
   * over as it starts; the caller tells the predecessor it serves (Successor.serving) once started.
   */
  successor?: Successor;
}

/** A node's data-plane worker threads. */
export interface DataPlaneThreads {
  /** The threadId of each slot's worker; undefined while a slot's worker is started again. */
  threadIds(): (number | undefined)[];
  /** Ends the worker of `slot` at once, whatever it is doing (it is started again). */
  terminate(slot: number): Promise<void>;
  /** Workers started again after one ended, since start. */
  readonly restarts: number;
}

/** What the control plane has built when it asks the data side to build itself. */
export interface ControlParts {
  config: () => Config;
  firstConfig: Config;
  logger: Logger;
  now: () => number;
  metrics: NodeMetrics;
  readiness: Readiness;
  cache: TieredCache;
  warm: WarmStore | undefined;
  invalidator: InvalidationEngine;
  cluster: ClusterNode | undefined;
  teardown: Teardown;
  options: StartNodeOptions;
  /** Whether the node drains: every data-plane thread reads it on each request. */
  drainFlag: DrainFlag;
  /** The data plane's certificates when it terminates TLS, and their changes at reloads. */
  certificates: NodeCertificates;
}

/** What serves the data plane, as the control plane uses it. */
export interface DataSide {
  /** Where each invalidation is applied too before it answers (the worker threads). */
  readonly replicas: InvalidationReplicas | undefined;
  /** Builds what serves, once the cache, the engine and the cluster member exist. */
  build(parts: ControlParts): Promise<void>;
  /**
   * Opens the data plane; resolves with its URL. `handed`: the listening sockets of the configured
   * address an upgraded predecessor handed over, taken rather than opened (upgrade-successor.ts).
   */
  start(onServingChange: (serving: number, total: number) => void, handed: HandedSockets | undefined): Promise<string>;
  /** The descriptors of the data plane's listening sockets, for an upgrade's successor. */
  listeningFds(): Promise<number[]>;
  /**
   * After an upgrade handed the sockets over: stops taking connections, and resolves once the data
   * plane's connections ended (true) or after `timeoutMs` (false).
   */
  stopAccepting(timeoutMs: number): Promise<boolean>;
  /** The fresh entry a plain request for `key` would be answered from (peer fetch's owner side). */
  freshEntry(key: string, requestHeaders: HeaderLookup): CacheEntry | undefined;
  /** Where the owner side asks this node's data plane for `key` (PeerFetcherOptions.dataPlane). */
  dataPlaneFor(key: string): string;
  /**
   * Waits for in-flight data-plane requests (the drain flag has already told every thread to stop
   * offering keep-alive); true once they are done, false when the drain timed out.
   */
  drain(): Promise<boolean>;
  /** After the control plane reloaded the file: the data plane applies it too. */
  reloaded(): Promise<void>;
  exposition(own: Registry, openMetrics: boolean): Promise<Exposition>;
  metricsSource(own: Registry): Pick<Registry, 'getMetricsAsJSON'>;
  readonly refresher: BackgroundRefresher | undefined;
  readonly threads: DataPlaneThreads | undefined;
  /** Resolves once the refresher has heard of every hit served so far (SvcNode.gatherHits). */
  gatherHits(): Promise<void>;
  /** What a configuration reload changes on this side. */
  reloadParts(): Partial<ReloadableParts>;
}
