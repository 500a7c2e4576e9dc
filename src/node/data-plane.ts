// The data plane one thread serves: routing and pools, the fill layer, the cache state machine and
// the listener, over a cache and an invalidation engine the caller built. A single-thread node builds
// one beside its control plane; a data-plane worker thread builds one alone (src/node/roles/).
import type { Server } from 'node:http';
import type { Config } from '../config/index.js';
import type { TieredCache } from '../store/tiered-cache.js';
import type { CacheEntry } from '../cache/entry.js';
import type { InvalidationEngine } from '../invalidation/create-invalidator.js';
import { FillLayer } from '../fill/fill-layer.js';
import { registerFillCounters } from '../fill/fill-counters.js';
import { CacheFlow, type PeerFetch, type ServedHook } from '../proxy/cache-flow.js';
import { createDataPlaneServer, type DataPlaneDeps } from '../proxy/data-plane-server.js';
import type { SiblingRouting } from '../proxy/home-routing.js';
import { createAccessLog, type AccessLog, type SharedAccessLog } from '../observe/access-log.js';
import { createRequestTracer } from '../observe/tracing/create-tracer.js';
import type { BatchLimits } from '../observe/tracing/otel-tracer.js';
import type { Logger } from '../observe/logger.js';
import type { NodeMetrics } from '../observe/metrics.js';
import { createRejectionLog } from '../edge/rejections.js';
import { TrustedProxies } from '../edge/trusted-proxies.js';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import { InFlightRequests } from '../proxy/in-flight.js';
import { TlsTermination } from '../tls/tls-termination.js';
import type { ListenerCertificate } from '../tls/listener-certificates.js';
import { close, listen, listeningFd, stopAccepting } from './listeners.js';
import { buildRouting, type NodeLimits, type Routing } from './routing.js';
import type { Teardown } from './teardown.js';

export interface DataPlaneOptions {
  config: Config;
  logger: Logger;
  now: () => number;
  metrics: NodeMetrics;
  cache: TieredCache;
  /** The store gate of fills and the lazy check of lookups. */
  invalidator: InvalidationEngine;
  isDraining: () => boolean;
  /** Whether a stored entry may be served now (a clustered node catching up; ClusterNode.servable). */
  servable?: ((entry: CacheEntry) => boolean) | undefined;
  /** Strong mode's peer fetch. */
  peer?: PeerFetch | undefined;
  /** A data-plane thread of several: which requests the key's home thread answers (home-routing.ts). */
  home?: SiblingRouting | undefined;
  /** Told of every request answered from cache (background refresh). */
  onServedFromCache?: ServedHook | undefined;
  /** The node's limits on origin traffic, as this thread counts them (node-limits.ts). */
  limits: NodeLimits;
  /** What the node's threads share of the access log (its hash key, its sampling count). */
  accessLog?: SharedAccessLog | undefined;
  tracingBatch?: Partial<BatchLimits> | undefined;
  /** `tls`: the certificates the listener serves, as the main thread read them; absent for plain HTTP. */
  certificates?: readonly ListenerCertificate[] | undefined;
  teardown: Teardown;
}

export interface DataPlane {
  readonly fills: FillLayer;
  readonly cacheFlow: CacheFlow;
  readonly deps: DataPlaneDeps;
  readonly accessLog: AccessLog;
  readonly inFlight: InFlightRequests;
  /** The routing at startup; a reload builds the next one from it. */
  readonly routing: Routing;
  /** The listener's TLS, which a reload gives new certificates; undefined for plain HTTP. */
  readonly tls: TlsTermination | undefined;
  /**
   * Opens a listener on `address` (sharing its port with the node's other threads when `reusePort`),
   * or on the socket `fd` an upgraded predecessor handed over.
   */
  listen(address: string, reusePort: boolean, fd?: number): Promise<string>;
  /** The descriptors of this thread's data-plane listening sockets, for an upgrade's successor. */
  listeningFds(): number[];
  /**
   * An upgrade handed this thread's sockets over: it stops taking connections, and resolves once its
   * connections ended (true) or after `timeoutMs` (false).
   */
  stopAccepting(timeoutMs: number): Promise<boolean>;
  /** The listener of this thread's Unix socket, for what the node's other threads hand over (home-routing.ts). */
  listenInternal(path: string): Promise<void>;
}

export async function buildDataPlane(options: DataPlaneOptions): Promise<DataPlane> {
  const { config, logger, metrics, now, cache, invalidator, teardown } = options;
  const fills = new FillLayer({
    cache,
    gate: invalidator,
    now,
    maxObjectBytes: config.max_object_bytes,
    writeIdleTimeoutMs: config.client_write_idle_timeout,
    counters: registerFillCounters(metrics.registry),
  });
  const routing = buildRouting(config, options.limits);
  // Closed after the listener stops (teardown runs newest first); a reload may have replaced the first
  // pools. The clients' grace is over by then: an origin request still running serves nobody, and is cut.
  teardown.add(async () => {
    await Promise.all([...deps.pools.values()].map((pool: UpstreamPool) => pool.close(0)));
  });
  // Shut down after the listener closed, so the last spans are sent.
  const tracer = await createRequestTracer(config.tracing, {
    registry: metrics.registry,
    instanceId: config.cluster?.node_name,
    batch: options.tracingBatch,
  });
  teardown.add(() => tracer.shutdown());
  const cacheFlow = new CacheFlow({
    cache,
    fills,
    now,
    logger,
    isInvalidated: (entry) => invalidator.isInvalidated(entry),
    servable: options.servable,
    peer: options.peer,
    home: options.home,
    onServedFromCache: options.onServedFromCache,
  });
  const accessLog = createAccessLog(logger, config.log.access_query, options.accessLog);
  const inFlight = new InFlightRequests();
  // The handshake is bounded by the header timeout: both are what a client takes before it asks.
  const tls = options.certificates && new TlsTermination(options.certificates, config.limits.header_timeout);
  const deps: DataPlaneDeps = {
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
    isDraining: options.isDraining,
    smugglingRejected: metrics.smugglingRejected,
    rejections: createRejectionLog('data', logger, metrics.edge.rejected),
    limits: {
      maxHeaderBytes: config.limits.max_header_bytes,
      maxHeaderFields: config.limits.max_header_fields,
      headerTimeoutMs: config.limits.header_timeout,
      keepAliveTimeoutMs: config.limits.keep_alive_timeout,
    },
    bodyIdleTimeoutMs: config.limits.body_idle_timeout,
    // The listener's own scheme (a request over TLS is https), unless a trusted proxy says otherwise.
    listenerScheme: tls === undefined ? 'http' : 'https',
    trustedProxies: new TrustedProxies(config.trusted_proxies),
    tls,
  };
  const opened = async (server: Server, open: () => Promise<string>): Promise<string> => {
    const url = await open();
    teardown.add(() => close(server));
    return url;
  };
  const listeners: Server[] = [];
  return {
    fills,
    cacheFlow,
    deps,
    accessLog,
    inFlight,
    routing,
    tls,
    listen: async (address, reusePort, fd) => {
      const server = createDataPlaneServer(deps);
      const url = await opened(server, () => listen(server, 'data-plane', address, { reusePort, fd }));
      listeners.push(server);
      return url;
    },
    listeningFds: () => listeners.map(listeningFd),
    stopAccepting: async (timeoutMs) => (await Promise.all(listeners.map((server) => stopAccepting(server, timeoutMs)))).every(Boolean),
    listenInternal: async (path) => {
      const server = createDataPlaneServer(deps, options.home);
      await opened(server, () => listen(server, 'internal', path, { reusePort: false }));
    },
  };
}
