// One svc node: its startup sequence, the parts it is made of, and its way out (drain, stop).
// The admin listener comes up first so that probes see the startup phases; the data plane opens
// last. The warm tier's index is rebuilt meanwhile and after: the tier joins the cache when it is
// complete, and readiness does not wait for it (docs/storage.md "Startup").
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/index.js';
import { ConfigError, splitHostPort } from '../config/index.js';
import { NodeMetrics } from '../observe/metrics.js';
import { createAccessLog } from '../observe/access-log.js';
import { createRequestTracer } from '../observe/tracing/create-tracer.js';
import type { BatchLimits } from '../observe/tracing/otel-tracer.js';
import type { Logger } from '../observe/logger.js';
import { createHotStore } from '../store/hot-store.js';
import type { WarmStore } from '../store/warm/warm-store.js';
import { discardedSchemaMessage } from '../store/warm/schema.js';
import { StoreError } from '../store/errors.js';
import { TieredCache } from '../cache/tiered-cache.js';
import type { CacheEntry } from '../cache/entry.js';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import { CacheFlow } from '../proxy/cache-flow.js';
import { FillLayer } from '../fill/fill-layer.js';
import { registerFillCounters } from '../fill/fill-counters.js';
import { createDataPlaneServer, type DataPlaneDeps } from '../proxy/data-plane-server.js';
import { AdminRouter } from '../admin/router.js';
import { createAdminServer } from '../admin/admin-server.js';
import { mountHealthRoutes } from '../admin/health-routes.js';
import { resolveAdminToken, type AdminToken } from '../admin/admin-token.js';
import { mountV1Routes } from '../admin/v1-routes.js';
import { createTokenCheck, type AuthFailureGuard } from '../admin/auth.js';
import { AuthFailureLimiter } from '../admin/auth-failures.js';
import { mountReloadRoutes } from '../admin/reload-routes.js';
import { createRejectionLog } from '../edge/rejections.js';
import { TrustedProxies } from '../edge/trusted-proxies.js';
import { createInvalidator, type InvalidationEngine } from '../invalidation/create-invalidator.js';
import { CdnPropagator } from '../cdn/cdn-propagator.js';
import { CdnInvalidator } from '../cdn/cdn-invalidator.js';
import { registerCdnMetrics } from '../cdn/cdn-metrics.js';
import { resolveCdnToken } from '../cdn/cdn-token.js';
import type { RetryTiming } from '../cdn/send-with-retries.js';
import { BackgroundRefresher } from '../refresh/background-refresher.js';
import { createCacheCheck } from './cache-check.js';
import { mountClusterRoutes } from '../admin/cluster-routes.js';
import { DashboardSessions } from '../admin/dashboard/dashboard-session.js';
import { mountDashboardRoutes } from '../admin/dashboard/dashboard-routes.js';
import { ClusterNode } from '../clustering/cluster-node.js';
import { Readiness } from './readiness.js';
import { InFlightRequests } from './in-flight.js';
import { Teardown } from './teardown.js';
import { pinTickObjectShape } from './tick-object-shape.js';
import { checkStartup } from './startup-checks.js';
import { openLockedWarmStore } from './warm-directory.js';
import { buildRouting } from './routing.js';
import { ConfigReloader, type ReloadOutcome, type ReloadStep } from './reload/config-reloader.js';
import { registerNodeReloadSteps } from './reload/node-reload-steps.js';
import { createFileReload } from './reload/reload-from-file.js';
import { DataPlaneWorkers, type DataPlaneWorkersOptions } from './workers/data-plane-workers.js';
import { workerCount } from './workers/worker-count.js';
import { shareWarmWithWorkers } from './workers/share-warm.js';
import { PeerRelay } from './workers/peer-relay.js';
import { createWorkerPeerFetcher, type WorkerPeers } from './workers/worker-peer-fetcher.js';
import type { CacheStore } from '../store/cache-store.js';

export interface StartNodeOptions {
  config: Config;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Wall clock, ms since the epoch; tests inject one to move time. */
  now?: () => number;
  /** Tests only: the CDN propagation's timers and jitter, so its waits are seen without being spent. */
  cdnTiming?: Partial<RetryTiming>;
  /** The file `config` was read from: with it the node can reload (`reload()`, `POST /v1/reload`). */
  configFile?: string;
  /** Reload steps of the caller's own parts (`svc serve` owns the log format). */
  reloadSteps?: readonly ReloadStep[];
  /** Tests only: the span export's batching, so a full queue or a failed export is seen quickly. */
  tracingBatch?: Partial<BatchLimits>;
  /**
   * Several data-plane workers serve the data plane instead of this process, which keeps the admin
   * API, readiness and the cluster member (`svc serve` with `workers` > 1; src/node/workers/).
   */
  workers?: DataPlaneWorkersOptions;
  /** `worker`: one of those workers: no admin listener, cluster member or CDN, its share of the hot tier. */
  role?: 'worker';
  /**
   * A worker's view of the warm tier its primary owns (worker-warm-tier.ts), in place of opening
   * `warm.path` itself; it joins the cache when `joined` resolves (the primary's tier is indexed).
   */
  sharedWarm?: { tier: CacheStore; joined: Promise<void> };
  /**
   * A worker of a clustered node: whether its primary's cluster member has caught up. Until then the
   * worker does not serve what was fetched before it started, as ClusterNode.servable does.
   */
  clusterCaughtUp?: () => boolean;
  /**
   * A worker of a strong-mode node: its primary's cluster member as the worker sees it, and the
   * primary's peer-fetch hop token. The worker asks owners through it (relayed-cluster-member.ts).
   */
  peers?: WorkerPeers;
}

export interface SvcNode {
  /** `http://host:port` of the data plane and of the admin API, with the ports actually bound. */
  readonly dataUrl: string;
  readonly adminUrl: string;
  readonly adminToken: AdminToken;
  readonly metrics: NodeMetrics;
  readonly readiness: Readiness;
  readonly cache: TieredCache;
  readonly invalidator: InvalidationEngine;
  /** The cluster side of the node; undefined when it runs alone. */
  readonly cluster: ClusterNode | undefined;
  /** Background refresh; undefined when no route has `refresh_before_expiry`. */
  readonly refresher: BackgroundRefresher | undefined;
  /** Every `METHOD path` the admin listener serves (for the OpenAPI coverage test). */
  adminRoutes(): string[];
  /** The configuration in force (the last one reloaded). */
  config(): Config;
  /**
   * Reads the configuration file again and applies what changed without dropping connections or the
   * cache; rejects with ConfigError (invalid) or ReloadRefusedError (needs a restart), the node left
   * as it was. Only for a node started with `configFile`.
   */
  reload(): Promise<ReloadOutcome>;
  /** Stops taking new work; resolves when in-flight requests are done or the drain timed out. */
  drain(): Promise<void>;
  /** Closes the cluster, listeners, pools and stores, newest first; the warm tier is flushed before it closes. */
  stop(): Promise<void>;
}

/** How long drain waits for in-flight requests: as long as the slowest origin is allowed to take. */
const DRAIN_TIMEOUT_MS = 30_000;

/** What the system says when a listener cannot open, in the words an operator searches for. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'no interface of this host has that address',
  EACCES: 'permission denied',
};

/** A listener that could not open: names which one, its configured address and why. */
export class ListenError extends Error {
  constructor(listener: string, address: string, cause: NodeJS.ErrnoException) {
    const reason = cause.code !== undefined && LISTEN_FAILURES[cause.code] ? `${LISTEN_FAILURES[cause.code]} (${cause.code})` : cause.message;
    super(`the ${listener} listener cannot open ${address}: ${reason}`, { cause });
    this.name = 'ListenError';
  }
}

async function listen(server: Server, listener: string, address: string): Promise<string> {
  const { host, port } = splitHostPort(address);
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => reject(new ListenError(listener, address, error));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return `http://${shownHost}:${bound.port}`;
}

async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Connections still busy after a grace period are cut: stop must end.
    setTimeout(() => server.closeAllConnections(), 2_000).unref();
  });
}

export async function startNode(options: StartNodeOptions): Promise<SvcNode> {
  const teardown = new Teardown();
  try {
    return await openNode(options, teardown);
  } catch (error) {
    await teardown.run().catch((closeError: unknown) => options.logger.warn({ err: closeError }, 'closing after a failed start failed'));
    throw error;
  }
}

async function openNode(options: StartNodeOptions, teardown: Teardown): Promise<SvcNode> {
  const { config, logger } = options;
  const isWorker = options.role === 'worker';
  const workers = options.workers ? new DataPlaneWorkers(options.workers, logger) : undefined;
  let current = config;
  const env = options.env ?? process.env;
  const problems = await checkStartup(config, env);
  if (problems.length > 0) throw new ConfigError(problems);
  // Without it, a node that sat idle once answers its hits about a quarter slower (see the module).
  await pinTickObjectShape();
  const now = options.now ?? Date.now;
  const metrics = new NodeMetrics();
  const readiness = new Readiness(metrics, now);
  const inFlight = new InFlightRequests();
  readiness.expect('data_listener_bound', 'the data-plane listener is not open yet');

  const adminToken = resolveAdminToken(env, config.admin.token);
  if (adminToken.source === 'generated' && !isWorker) {
    // Spec §5.2: with no token configured, the generated one is logged once so an operator can use it.
    logger.warn({ admin_token: adminToken.value }, 'no admin token configured: generated one for this run');
  }

  let draining: Promise<void> | undefined;
  const drain = (): Promise<void> => {
    draining ??= (async () => {
      readiness.markDraining();
      logger.info({ in_flight: inFlight.size }, 'draining');
      const [idle] = await Promise.all([inFlight.idle(DRAIN_TIMEOUT_MS), workers?.drain()]);
      readiness.markDrained();
      logger.info({ timed_out: !idle }, 'drained');
    })();
    return draining;
  };

  const reloader = new ConfigReloader();
  for (const step of options.reloadSteps ?? []) reloader.register(step);
  let markStarted = (): void => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const fileReload =
    options.configFile === undefined
      ? undefined
      : createFileReload({ file: options.configFile, env, reloader, logger, registry: metrics.registry, started, current: () => current, replace: (next) => (current = next) });

  const limits = {
    maxHeaderBytes: config.limits.max_header_bytes,
    headerTimeoutMs: config.limits.header_timeout,
    keepAliveTimeoutMs: config.limits.keep_alive_timeout,
  };
  // With workers, a reload answers once every worker applied it too.
  const reload =
    fileReload && workers
      ? async (): Promise<ReloadOutcome> => {
          const outcome = await fileReload();
          if (outcome.status === 'reloaded') await workers.reload();
          return outcome;
        }
      : fileReload;

  const router = new AdminRouter();
  const exposition = workers ? { exposition: (openMetrics?: boolean) => workers.exposition(metrics.registry, openMetrics) } : metrics;
  mountHealthRoutes(router, { readiness, metrics: exposition, drain });
  const adminRejections = createRejectionLog('admin', logger, metrics.edge.rejected);
  let adminUrl = '';
  if (!isWorker) {
    const adminServer = createAdminServer(router, {
      logger,
      limits,
      bodyIdleTimeoutMs: config.limits.body_idle_timeout,
      rejections: adminRejections,
      smugglingRejected: metrics.smugglingRejected,
    });
    adminUrl = await listen(adminServer, 'admin', config.admin.listen);
    teardown.add(() => close(adminServer));
  }

  let warm: WarmStore | undefined;
  if (config.warm && !isWorker) {
    const warmConfig = config.warm;
    warm = await readiness.phase('log_replay', () => openLockedWarmStore(warmConfig, now, teardown, config.cluster?.mode));
    const opened = warm;
    // Advisory: the node serves (from the hot tier and the origin) while the index is rebuilt.
    readiness.set('warm_store_indexed', false, `indexing ${opened.recordsAtOpen} records`, false);
    opened.indexed.then(
      () => {
        const report = opened.openReport;
        if (report.discardedSchema) {
          logger.warn({ discarded: report.discardedSchema }, discardedSchemaMessage(warmConfig.path, report.discardedSchema));
        }
        if (report.discardedMode) {
          logger.warn({ was: report.discardedMode, now: config.cluster?.mode }, 'warm tier was filled under another cluster mode: wiped (spec §1.4)');
        }
        logger.info({ entries: report.entryCount, duration_ms: report.durationMs }, 'warm tier indexed');
        readiness.set('warm_store_indexed', true, `${report.entryCount} entries indexed`, false);
      },
      (error: unknown) => {
        if (error instanceof StoreError && error.code === 'closed') return;
        logger.error({ err: error }, 'the warm tier could not be indexed: the node serves without it');
        readiness.set('warm_store_indexed', false, `indexing failed: ${(error as Error).message}`, false);
      },
    );
  }
  // Evictions from the hot tier are demoted to the warm one (when the write-through copy is missing).
  // A worker holds its share of the hot tier: the node's memory bound stays hot_max_bytes.
  const hotShare = (bytes: number): number => (isWorker ? Math.max(1, Math.floor(bytes / workerCount(config))) : bytes);
  const hot = createHotStore({ maxBytes: hotShare(config.hot_max_bytes), onEvict: (entry) => cache.demote(entry) });
  // A worker reads the tier its primary owns, which reports its figures.
  const sharedWarm = isWorker ? options.sharedWarm : undefined;
  const cache = sharedWarm ? new TieredCache(hot, sharedWarm.tier, sharedWarm.joined) : new TieredCache(hot, warm, warm?.indexed);
  metrics.bindStores(hot, warm);

  // Bans and purges are kept beside the warm tier they must outlive; without one, nothing survives a
  // restart that an invalidation would need to hide. A worker's are its primary's to keep.
  const invalidationDir = config.warm && !isWorker ? join(config.warm.path, 'invalidation') : undefined;
  const invalidator = createInvalidator({
    cache,
    logger,
    now,
    dataDir: invalidationDir,
    // A worker starts knowing every ban and purge its primary's journal holds: the warm tier they
    // share may still hold what those hide (bans are swept from it lazily).
    replayFrom: sharedWarm && config.warm ? join(config.warm.path, 'invalidation') : undefined,
    maxActiveBans: config.max_active_bans,
    replicas: workers?.replicas(),
  });
  metrics.bindBans(invalidator);
  // The workers read the warm tier from disk and send their changes here, its one writer.
  if (workers && warm) shareWarmWithWorkers(workers, warm, cache, invalidator, logger);
  await readiness.phase('log_replay', () => invalidator.start());
  teardown.add(() => invalidator.stop());
  // With workers, an invalidation is applied in every one of them before it is answered.
  // CDN purges not yet confirmed are kept beside the invalidation journal, and sent again at start.
  // A data-plane worker has neither: its primary propagates and holds the cluster member.
  const cdnConfig = isWorker ? undefined : config.cdn;
  const clusterConfig = isWorker ? undefined : config.cluster;
  const cdn = cdnConfig
    ? await readiness.phase('log_replay', () =>
        CdnPropagator.start({
          config: cdnConfig,
          token: resolveCdnToken(cdnConfig.api_token, options.env ?? process.env),
          logger,
          metrics: registerCdnMetrics(metrics.registry),
          pendingDir: invalidationDir,
          now,
          timing: options.cdnTiming,
        }),
      )
    : undefined;
  if (cdn) teardown.add(() => cdn.stop());
  // Every miss, revalidation, refresh and peer fetch becomes a stored entry here, behind the store gate.
  const fills = new FillLayer({
    cache,
    gate: invalidator,
    now,
    maxObjectBytes: config.max_object_bytes,
    writeIdleTimeoutMs: config.client_write_idle_timeout,
    counters: registerFillCounters(metrics.registry),
  });

  let dataUrl = '';
  const cluster: ClusterNode | undefined = clusterConfig
    ? await ClusterNode.create({
        config: { ...config, cluster: clusterConfig },
        logger,
        metrics,
        readiness,
        local: invalidator,
        adminAddress: new URL(adminUrl).host,
        dataPlaneUrl: () => dataUrl,
        freshEntry: (key, requestHeaders): CacheEntry | undefined => cacheFlow.freshEntry(key, requestHeaders),
        // Records still being indexed are held too: a gap must be distrusted for them.
        holdsEntries: () => hot.entryCount + (warm === undefined ? 0 : Math.max(warm.entryCount, warm.recordsAtOpen)) > 0,
        stateDir: config.warm ? join(config.warm.path, 'invalidation') : undefined,
        now,
      })
    : undefined;
  mountClusterRoutes(router, () => cluster?.peers() ?? []);
  if (workers && cluster) void cluster.caughtUp.then(() => workers.clusterCaughtUp());
  // Strong mode with workers: they learn the ring from this member and ask owners through it.
  if (workers && cluster?.peerFetcher) workers.relayPeers(new PeerRelay(cluster.member, cluster.peerFetcher.hopToken));
  const workerPeers = isWorker && config.cluster ? options.peers : undefined;
  const workerPeerFetcher =
    workerPeers &&
    config.cluster &&
    createWorkerPeerFetcher(workerPeers, {
      config: { ...config, cluster: config.cluster },
      metrics,
      now,
      dataPlaneUrl: () => dataUrl,
      freshEntry: (key, requestHeaders) => cacheFlow.freshEntry(key, requestHeaders),
    });
  if (workerPeerFetcher) teardown.add(() => workerPeerFetcher.close());
  const peerFetcher = cluster?.peerFetcher ?? workerPeerFetcher;
  const startedMs = now();
  const caughtUp = isWorker && config.cluster ? options.clusterCaughtUp : undefined;
  const servable = cluster
    ? (entry: CacheEntry): boolean => cluster.servable(entry)
    : caughtUp && ((entry: CacheEntry): boolean => caughtUp() || entry.requestTimeMs >= startedMs);
  // In a cluster, the admin API's invalidations go to the other nodes too; with a CDN, to the CDN
  // as well, from this node only (peers apply what they receive without forwarding it).
  const adminInvalidator = cluster?.invalidator ?? invalidator;
  const sessions = new DashboardSessions({ adminToken: () => adminToken.value, now });
  // One wrong-token limit for every way a token is presented: the API, the reload and the dashboard's login.
  const authGuard: AuthFailureGuard = {
    limiter: new AuthFailureLimiter({ limit: config.admin.auth_failure_limit, windowMs: config.admin.auth_failure_window, now }),
    counter: metrics.edge.adminAuthFailures,
    logger,
    rejections: adminRejections,
  };
  const ownCacheCheck = createCacheCheck({
    cache,
    now,
    isInvalidated: (entry) => invalidator.isInvalidated(entry),
    matchingBans: (entry) => invalidator.matchingBans(entry),
    ownerOf: (key) => cluster?.ownerOf(key) ?? null,
  });
  mountV1Routes(router, {
    sessions,
    now,
    invalidator: cdn ? new CdnInvalidator(adminInvalidator, cdn) : adminInvalidator,
    admitBan: (spec) => invalidator.admitBan(spec),
    cdnStatus: cdn ? () => cdn.status() : undefined,
    adminToken,
    config: () => current,
    stats: async (url) => ({
      tiers: {
        hot: { ...(workers ? await workers.hotTier() : { entries: hot.entryCount, bytes: hot.byteCount }), max_bytes: current.hot_max_bytes },
        warm: warm && config.warm ? { entries: warm.entryCount, bytes: warm.byteCount, max_bytes: config.warm.max_bytes } : null,
      },
      ring: cluster?.ringStats(url) ?? null,
    }),
    cacheCheck: (url) => (workers ? workers.cacheCheck(url, ownCacheCheck) : ownCacheCheck(url)),
    pprofEnabled: config.admin.pprof_enabled,
    authGuard,
  });
  mountDashboardRoutes(router, {
    sessions,
    adminToken,
    authGuard,
    registry: workers ? workers.metricsSource(metrics.registry) : metrics.registry,
    capacities: () => ({ hotMaxBytes: current.hot_max_bytes, warmMaxBytes: config.warm?.max_bytes }),
    nodeName: config.cluster?.node_name,
  });
  if (reload) mountReloadRoutes(router, { check: createTokenCheck(adminToken, authGuard), reload });

  const routing = buildRouting(config);
  // Closed after the data plane and background refresh stop; a reload may have replaced the first pools.
  let poolsInUse = (): ReadonlyMap<string, UpstreamPool> => routing.pools;
  teardown.add(async () => {
    await Promise.all([...poolsInUse().values()].map((pool) => pool.close()));
  });
  // Background refresh exists only when a route asks for it (spec §6.5: its metrics appear only then).
  const { refreshRoutes } = routing;
  const refresher =
    refreshRoutes.length === 0
      ? undefined
      : new BackgroundRefresher({
          cache,
          routes: refreshRoutes,
          registry: metrics.registry,
          logger,
          now,
          fills,
          isInvalidated: (entry) => invalidator.isInvalidated(entry),
          // What is popular is kept beside the warm tier, so it survives a restart as the entries do
          // (by the process that owns the directory: a worker's popularity starts afresh).
          persistDirectory: config.warm && !isWorker ? join(config.warm.path, 'refresh') : undefined,
        });
  await refresher?.start();
  if (refresher) teardown.add(() => refresher.stop());
  // Shut down after the data plane closed (teardown runs newest first), so the last spans are sent.
  const tracer = await createRequestTracer(config.tracing, {
    registry: metrics.registry,
    instanceId: config.cluster?.node_name,
    batch: options.tracingBatch,
  });
  teardown.add(() => tracer.shutdown());
  const cacheFlow: CacheFlow = new CacheFlow({
    cache,
    fills,
    now,
    logger,
    isInvalidated: (entry) => invalidator.isInvalidated(entry),
    servable,
    onServedFromCache: refresher?.onServedFromCache,
    peer: peerFetcher,
  });
  const accessLog = createAccessLog(logger, config.log.access_query);
  const dataPlane: DataPlaneDeps = {
    routes: routing.routes,
    pools: routing.pools,
    cacheFlow,
    fills,
    cache,
    logger,
    metrics,
    accessLog,
    inFlight,
    tracer,
    isDraining: () => readiness.isDraining(),
    smugglingRejected: metrics.smugglingRejected,
    rejections: createRejectionLog('data', logger, metrics.edge.rejected),
    limits,
    bodyIdleTimeoutMs: config.limits.body_idle_timeout,
    // svc's data plane speaks plain HTTP: a request's scheme is http unless a trusted proxy says https.
    listenerScheme: 'http',
    trustedProxies: new TrustedProxies(config.trusted_proxies),
  };
  poolsInUse = () => dataPlane.pools;
  registerNodeReloadSteps(reloader, { logger, env, hot: { resize: (bytes) => hot.resize(hotShare(bytes)) }, fills, peerFetcher, refresher, dataPlane, routing, adminToken, accessLog, invalidator });
  if (workers) {
    const total = options.workers!.workers;
    // Ready while at least one worker serves; a dead one is forked again meanwhile.
    const serving = (count: number): void =>
      readiness.set('data_listener_bound', count > 0, count > 0 ? `listening on ${dataUrl} (${count} of ${total} workers)` : 'no data-plane worker serves: forking them again');
    dataUrl = await workers.start(serving);
    teardown.add(() => workers.stop());
    serving(total);
  } else {
    const dataServer = createDataPlaneServer(dataPlane);
    dataUrl = await listen(dataServer, 'data-plane', config.listen);
    teardown.add(() => close(dataServer));
    readiness.set('data_listener_bound', true, `listening on ${dataUrl}`);
  }
  // Joined last: peers may send fetches as soon as they know this node, and the data plane answers them.
  if (cluster) {
    teardown.add(() => cluster.stop());
    await cluster.start();
  }
  logger.info(isWorker ? { data: dataUrl } : { data: dataUrl, admin: adminUrl }, 'svc is serving');
  markStarted();

  return {
    dataUrl,
    adminUrl,
    adminToken,
    metrics,
    readiness,
    cache,
    invalidator,
    refresher,
    cluster,
    adminRoutes: () => router.routes(),
    config: () => current,
    reload: () => {
      if (!reload) return Promise.reject(new Error('this node was started without a configuration file, so it cannot reload'));
      return reload();
    },
    drain,
    // Cluster first (peers stop sending fetches), then the data plane, and the stores last.
    stop: () => teardown.run(),
  };
}
