// One svc node: its startup sequence, the parts it is made of, and its way out (drain, stop).
//
// A node runs in one of two shapes, chosen by `workers` (one per core when absent):
// - one thread (`workers: 1`): this thread is the control plane and the data plane;
// - several threads: this thread (the main one) is the control plane and each worker thread serves
//   the data plane (roles/worker-node.ts), all over one hot tier in shared memory.
// The control plane is the same in both (this module); what serves the data plane is a DataSide
// (roles/single-thread-side.ts, roles/worker-threads-side.ts), built from the shared data-plane
// builder (data-plane.ts) or by the worker threads. The admin listener comes up first so that probes
// see the startup phases; the data plane opens last. The warm tier serves as soon as it is open: its
// index is lmdb's, and nothing is rebuilt.
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { Config } from '../config/index.js';
import { ConfigError } from '../config/index.js';
import { NodeMetrics } from '../observe/metrics.js';
import type { Logger } from '../observe/logger.js';
import { createHotStore } from '../store/hot-store.js';
import type { WarmStore } from '../store/warm/warm-store.js';
import { discardedSchemaMessage } from '../store/warm/schema.js';
import { TieredCache } from '../store/tiered-cache.js';
import { AdminRouter } from '../admin/router.js';
import { createAdminServer } from '../admin/admin-server.js';
import { mountHealthRoutes } from '../admin/health-routes.js';
import { mountDrainRoute } from '../admin/drain-routes.js';
import { resolveAdminToken, type AdminToken } from '../admin/admin-token.js';
import { mountV1Routes } from '../admin/v1-routes.js';
import { createTokenCheck, type AuthFailureGuard } from '../admin/auth.js';
import { AuthFailureLimiter } from '../admin/auth-failures.js';
import { mountReloadRoutes } from '../admin/reload-routes.js';
import { createRejectionLog } from '../edge/rejections.js';
import { createInvalidator, type InvalidationEngine } from '../invalidation/create-invalidator.js';
import { CdnPropagator } from '../cdn/cdn-propagator.js';
import { CdnInvalidator } from '../cdn/cdn-invalidator.js';
import { registerCdnMetrics } from '../cdn/cdn-metrics.js';
import { resolveCdnToken } from '../cdn/cdn-token.js';
import type { BackgroundRefresher } from '../refresh/background-refresher.js';
import { mountClusterRoutes } from '../admin/cluster-routes.js';
import { DashboardSessions } from '../admin/dashboard/dashboard-session.js';
import { mountDashboardRoutes } from '../admin/dashboard/dashboard-routes.js';
import { summarizeMetrics, type MetricsSummary, type TierCapacities } from '../admin/dashboard/metrics-summary.js';
import { ClusterNode } from '../clustering/cluster-node.js';
import { createCacheCheck } from './cache-check.js';
import { peerMetricsReport } from './peer-metrics-report.js';
import { Readiness } from '../observe/readiness.js';
import { DrainFlag } from './drain-flag.js';
import { DrainControl } from './drain-control.js';
import { Teardown } from './teardown.js';
import { pinTickObjectShape } from './tick-object-shape.js';
import { checkStartup } from './startup-checks.js';
import { NodeCertificates } from './node-certificates.js';
import { CertificateExpiry } from '../tls/certificate-expiry.js';
import { openLockedWarmStore } from './warm-directory.js';
import { close, listenChecked, probeAddress } from './listeners.js';
import { nodeInternalsAllowed } from '../runtime/node-internals.js';
import { startSuccessor, type UpgradeOutcome } from './upgrade-predecessor.js';
import { DRAIN_TIMEOUT_MS } from './drain-timeout.js';
import { ConfigReloader, type ReloadOutcome } from './reload/config-reloader.js';
import { registerNodeReloadSteps } from './reload/node-reload-steps.js';
import { createFileReload } from './reload/reload-from-file.js';
import { workerCount } from './workers/worker-count.js';
import { singleThreadSide } from './roles/single-thread-side.js';
import { workerThreadsSide } from './roles/worker-threads-side.js';
import type { DataPlaneThreads, DataSide, StartNodeOptions } from './roles/data-side.js';

export { ListenError } from './listeners.js';
export type { DataPlaneThreads, StartNodeOptions } from './roles/data-side.js';

export interface SvcNode {
  /** `http://host:port` of the data plane and of the admin API, with the ports actually bound. */
  readonly dataUrl: string;
  readonly adminUrl: string;
  readonly adminToken: AdminToken;
  readonly metrics: NodeMetrics;
  readonly readiness: Readiness;
  /** The node's cache: the hot tier every thread shares, and the warm tier. */
  readonly cache: TieredCache;
  readonly invalidator: InvalidationEngine;
  /** The cluster side of the node; undefined when it runs alone. */
  readonly cluster: ClusterNode | undefined;
  /** Background refresh; undefined when no route has `refresh_before_expiry`. */
  readonly refresher: BackgroundRefresher | undefined;
  /** Threads that serve the data plane (`workers`). */
  readonly workers: number;
  /** The data-plane worker threads, when there are several (for operators' tools and tests). */
  readonly dataPlaneThreads: DataPlaneThreads | undefined;
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
  /**
   * Resolves once background refresh has heard of every hit the node served so far. The data-plane
   * threads report theirs every 100 ms; a test that moves the node's clock asks for them at once.
   */
  gatherHits(): Promise<void>;
  /**
   * Starts `command` (this process's own, so the build now on disk is what starts) as this node's
   * successor and hands it the node (upgrade-predecessor.ts): resolves 'handed-over' once the
   * successor serves and this node's connections ended (or the drain timed out), after which stop()
   * and exit; 'failed' when the successor did not get to serve, this node serving on (logged).
   */
  upgrade(command: readonly string[]): Promise<UpgradeOutcome>;
  /** Closes the cluster, listeners, pools and stores, newest first; the warm tier is flushed before it closes. */
  stop(): Promise<void>;
}

export async function startNode(options: StartNodeOptions): Promise<SvcNode> {
  const teardown = new Teardown();
  try {
    const threads = workerCount(options.config);
    const side = threads > 1 ? workerThreadsSide(threads, options) : singleThreadSide();
    return await openNode(options, teardown, side, threads);
  } catch (error) {
    await teardown.run().catch((closeError: unknown) => options.logger.warn({ err: closeError }, 'closing after a failed start failed'));
    throw error;
  }
}

async function openNode(options: StartNodeOptions, teardown: Teardown, side: DataSide, threads: number): Promise<SvcNode> {
  const { config, logger } = options;
  let current = config;
  const env = options.env ?? process.env;
  const problems = await checkStartup(config, env);
  if (problems.length > 0) throw new ConfigError(problems);
  // A data-plane port already taken is reported now, not after the warm tier, the worker threads and
  // the cluster have started (seconds on a large machine); the listener opens for real last. An
  // upgrade's successor takes its predecessor's sockets instead: that port is taken, by them.
  const handedData = options.successor?.dataSockets(config.listen);
  if (handedData === undefined) await probeAddress('data-plane', config.listen);
  // Without it, a node that sat idle once answers its hits about a quarter slower (see the module).
  await pinTickObjectShape();
  const now = options.clock?.now ?? Date.now;
  const metrics = new NodeMetrics();
  const readiness = new Readiness(metrics, now);
  // The TLS listeners' certificates: read here, once for every thread (node-certificates.ts).
  const certificates = await NodeCertificates.load(config, new CertificateExpiry(metrics.registry, logger, now));
  teardown.add(() => certificates.stop());
  readiness.expect('data_listener_bound', 'the data-plane listener is not open yet');

  const adminToken = resolveAdminToken(env, config.admin.token);
  // Spec §5.2: with no token configured, the generated one is logged once so an operator can use it.
  if (adminToken.source === 'generated') logger.warn({ admin_token: adminToken.value }, 'no admin token configured: generated one for this run');

  const drainFlag = DrainFlag.create();
  const drainControl = new DrainControl({ readiness, flag: drainFlag, logger, waitForInFlight: () => side.drain() });
  const drain = (): Promise<void> => drainControl.drain();

  const reloader = new ConfigReloader();
  for (const step of options.reloadSteps ?? []) reloader.register(step);
  let markStarted = (): void => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const fileReload =
    options.configFile === undefined
      ? undefined
      : createFileReload({ file: options.configFile, env, reloader, logger, registry: metrics.registry, started, current: () => current, replace: (next) => (current = next) });
  // A reload answers once the data plane applied it too.
  const reload =
    fileReload &&
    (async (): Promise<ReloadOutcome> => {
      const outcome = await fileReload();
      if (outcome.status === 'reloaded') await Promise.all([side.reloaded(), certificates.applied()]);
      return outcome;
    });

  const router = new AdminRouter();
  mountHealthRoutes(router, { readiness, metrics: { exposition: (openMetrics?: boolean) => side.exposition(metrics.registry, openMetrics ?? false) } });
  const adminRejections = createRejectionLog('admin', logger, metrics.edge.rejected);
  // Mounted before the listener opens, as the probes are: a node may be drained while it starts.
  mountDrainRoute(router, { drain, rejections: adminRejections });
  const adminServer = createAdminServer(router, {
    logger,
    limits: {
      maxHeaderBytes: config.limits.max_header_bytes,
      maxHeaderFields: config.limits.max_header_fields,
      headerTimeoutMs: config.limits.header_timeout,
      keepAliveTimeoutMs: config.limits.keep_alive_timeout,
    },
    bodyIdleTimeoutMs: config.limits.body_idle_timeout,
    rejections: adminRejections,
    smugglingRejected: metrics.smugglingRejected,
    tls: certificates.admin,
  });
  // A successor answers admin requests once it serves: until then its predecessor does, ready.
  // With SVC_NODE_INTERNALS=off an upgrade's successor opens a socket of its own beside this one's.
  const handedAdmin = await options.successor?.openAdmin(adminServer, config.admin.listen);
  const adminUrl = handedAdmin?.url ?? (await listenChecked(adminServer, 'admin', config.admin.listen, !nodeInternalsAllowed(env)));
  teardown.add(() => close(adminServer));

  // What writes in the node's directory, let go of together: at the stop, or when an upgrade's
  // successor takes the directory over.
  const directory = new Teardown();
  teardown.add(() => directory.run());
  await options.successor?.takeOver();
  const warm = config.warm ? await openWarm(config, readiness, now, directory, logger) : undefined;
  // Evictions from the hot tier are demoted to the warm one (when the write-through copy is missing).
  const hot = createHotStore({ maxBytes: config.hot_max_bytes, onEvict: (entry) => cache.demote(entry) });
  const cache = new TieredCache(hot, warm);
  metrics.bindStores(hot, warm);

  // Bans and purges are kept beside the warm tier they must outlive; without one, nothing survives a
  // restart that an invalidation would need to hide.
  const invalidationDir = config.warm ? join(config.warm.path, 'invalidation') : undefined;
  const invalidator = createInvalidator({ cache, logger, now, dataDir: invalidationDir, maxActiveBans: config.max_active_bans, replicas: side.replicas });
  metrics.bindBans(invalidator);
  await readiness.phase('log_replay', () => invalidator.start());
  directory.add(() => invalidator.stop());
  // CDN purges not yet confirmed are kept beside the invalidation journal, and sent again at start.
  const cdnConfig = config.cdn;
  const cdn = cdnConfig
    ? await readiness.phase('log_replay', () =>
        CdnPropagator.start({
          config: cdnConfig,
          token: resolveCdnToken(cdnConfig.api_token, env),
          logger,
          metrics: registerCdnMetrics(metrics.registry),
          pendingDir: invalidationDir,
          now,
          timing: options.cdnTiming,
        }),
      )
    : undefined;
  if (cdn) directory.add(() => cdn.stop());

  const clusterConfig = config.cluster;
  // The Overview's figures: read by the dashboard, and by the other nodes through /v1/peer/metrics.
  const capacities = (): TierCapacities => ({ hotMaxBytes: current.hot_max_bytes, warmMaxBytes: config.warm?.max_bytes });
  const metricsSummary = (): Promise<MetricsSummary> => summarizeMetrics(side.metricsSource(metrics.registry), capacities());
  const cluster: ClusterNode | undefined = clusterConfig
    ? await ClusterNode.create({
        config: { ...config, cluster: clusterConfig },
        logger,
        metrics,
        readiness,
        local: invalidator,
        adminAddress: new URL(adminUrl).host,
        dataPlane: (key) => side.dataPlaneFor(key),
        freshEntry: (key, requestHeaders) => side.freshEntry(key, requestHeaders),
        holdsEntries: () => hot.entryCount + (warm?.entryCount ?? 0) > 0,
        metricsReport: async () => peerMetricsReport(await metricsSummary(), clusterConfig.node_name),
        stateDir: invalidationDir,
        now,
      })
    : undefined;
  mountClusterRoutes(router, () => cluster?.peers() ?? []);
  await side.build({
    config: () => current,
    firstConfig: config,
    logger,
    now,
    metrics,
    readiness,
    cache,
    warm,
    invalidator,
    cluster,
    teardown,
    options,
    drainFlag,
    certificates,
  });

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
  mountV1Routes(router, {
    sessions,
    now,
    invalidator: cdn ? new CdnInvalidator(adminInvalidator, cdn) : adminInvalidator,
    admitBan: (spec) => invalidator.admitBan(spec),
    cdnStatus: cdn ? () => cdn.status() : undefined,
    adminToken,
    // `workers` as it runs: the file's, or one per core when the file leaves it out.
    config: () => ({ ...current, workers: threads }),
    stats: (url) => ({
      tiers: {
        hot: { entries: hot.entryCount, bytes: hot.byteCount, max_bytes: current.hot_max_bytes },
        warm: warm && config.warm ? { entries: warm.entryCount, bytes: warm.byteCount, max_bytes: config.warm.max_bytes } : null,
      },
      ring: cluster?.ringStats(url) ?? null,
    }),
    cacheCheck: createCacheCheck({
      cache,
      now,
      isInvalidated: (entry) => invalidator.isInvalidated(entry),
      matchingBans: (entry) => invalidator.matchingBans(entry),
      ownerOf: (key) => cluster?.ownerOf(key) ?? null,
      config: () => current,
    }),
    pprofEnabled: config.admin.pprof_enabled,
    authGuard,
    undrain: () => drainControl.undrain(),
  });
  mountDashboardRoutes(router, {
    sessions,
    adminToken,
    authGuard,
    registry: side.metricsSource(metrics.registry),
    capacities,
    clusterMetrics: cluster && (() => cluster.memberMetrics()),
    nodeName: config.cluster?.node_name,
  });
  if (reload) mountReloadRoutes(router, { check: createTokenCheck(adminToken, authGuard), reload });
  registerNodeReloadSteps(reloader, { logger, env, hot, adminToken, invalidator, refresher: side.refresher, certificates, ...side.reloadParts() });

  const dataUrl = await side.start(
    (serving, total) =>
      readiness.set(
        'data_listener_bound',
        serving > 0,
        serving === 0 ? 'no data-plane thread serves: starting them again' : total > 1 ? `listening (${serving} of ${total} threads)` : 'listening',
      ),
    handedData,
  );
  readiness.set('data_listener_bound', true, threads > 1 ? `listening on ${dataUrl} (${threads} threads)` : `listening on ${dataUrl}`);
  // Joined last: peers may send fetches as soon as they know this node, and the data plane answers them.
  if (cluster) {
    teardown.add(() => cluster.stop());
    await cluster.start();
  }
  await handedAdmin?.serve();
  logger.info({ data: dataUrl, admin: adminUrl, workers: threads }, 'svc is serving');
  markStarted();
  const upgrade = upgrader({
    config,
    logger,
    env,
    adminServer,
    adminUrl,
    dataUrl,
    side,
    drainFlag,
    releaseDirectory: () => directory.run(),
  });

  return {
    dataUrl,
    adminUrl,
    adminToken,
    metrics,
    readiness,
    cache,
    invalidator,
    refresher: side.refresher,
    cluster,
    workers: threads,
    dataPlaneThreads: side.threads,
    adminRoutes: () => router.routes(),
    config: () => current,
    reload: () => {
      if (!reload) return Promise.reject(new Error('this node was started without a configuration file, so it cannot reload'));
      return reload();
    },
    drain,
    gatherHits: () => side.gatherHits(),
    upgrade,
    // Cluster first (peers stop sending fetches), then the data plane, and the stores last.
    stop: () => teardown.run(),
  };
}

/**
 * SvcNode.upgrade: one at a time; once the successor serves, this node's responses say
 * `Connection: close` and its data plane stops taking connections and waits for its own to end.
 */
function upgrader(parts: { config: Config; logger: Logger; env: NodeJS.ProcessEnv; adminServer: Server; adminUrl: string; dataUrl: string; side: DataSide; drainFlag: DrainFlag; releaseDirectory: () => Promise<void> }): (command: readonly string[]) => Promise<UpgradeOutcome> {
  const { config, logger, side } = parts;
  let upgrading = false;
  return async (command) => {
    if (upgrading) {
      logger.warn('upgrade: one is in progress already: this signal is ignored');
      return 'failed';
    }
    if (config.cluster) {
      logger.error('upgrade: a node of a cluster is upgraded by a restart (its cluster port and its place in the membership are not handed over): this process serves on');
      return 'failed';
    }
    upgrading = true;
    const outcome = await startSuccessor(
      {
        logger,
        env: parts.env,
        admin: { server: parts.adminServer, address: config.admin.listen, url: parts.adminUrl },
        data: { address: config.listen, url: parts.dataUrl, fds: () => side.listeningFds() },
        releaseDirectory: parts.releaseDirectory,
      },
      command,
    );
    if (outcome === 'failed') {
      upgrading = false;
      return outcome;
    }
    parts.drainFlag.set(true);
    const drained = await side.stopAccepting(DRAIN_TIMEOUT_MS);
    logger.info({ drained }, drained ? 'upgrade: every connection of this process ended' : 'upgrade: connections still open after the drain timeout are cut by the stop');
    return outcome;
  };
}

/** Opens the warm tier (log replay): it serves once open, and says what it found. */
async function openWarm(config: Config, readiness: Readiness, now: () => number, teardown: Teardown, logger: Logger): Promise<WarmStore> {
  const warmConfig = config.warm!;
  const warm = await readiness.phase('log_replay', () => openLockedWarmStore(warmConfig, now, teardown, config.cluster?.mode));
  const report = warm.openReport;
  if (report.discardedSchema) logger.warn({ discarded: report.discardedSchema }, discardedSchemaMessage(warmConfig.path, report.discardedSchema));
  if (report.discardedMode) logger.warn({ was: report.discardedMode, now: config.cluster?.mode }, 'warm tier was filled under another cluster mode: wiped (spec §1.4)');
  // The line and the (advisory) condition operators read for what survived the restart: the tier's
  // index is lmdb's, complete once open, so both hold from the open on.
  logger.info({ entries: report.entryCount, duration_ms: report.durationMs }, 'warm tier indexed');
  readiness.set('warm_store_indexed', true, `${report.entryCount} entries on disk, served from the open (nothing to rebuild)`, false);
  return warm;
}
