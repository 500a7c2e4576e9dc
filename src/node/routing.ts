// The node's routing, built from `pools` and `routes`: an upstream pool per configured pool, the
// route table of the data plane, and the routes that background refresh serves. Built once at
// startup and again by a configuration reload, which keeps every pool whose settings did not change
// (its keep-alive connections with it).
import { isDeepStrictEqual } from 'node:util';
import type { Config } from '../config/index.js';
import { ClientBudget } from '../upstream/client-budget.js';
import type { SharedCounters } from '../shared-memory/shared-counters.js';
import { UpstreamPool } from '../upstream/upstream-pool.js';
import { RouteTable, routeLabel } from '../proxy/route-table.js';
import type { DataPlaneRoute } from '../proxy/data-plane-server.js';
import type { RefreshRoute } from '../refresh/background-refresher.js';

type PoolConfig = Config['pools'][number];

export interface Routing {
  pools: Map<string, UpstreamPool>;
  routes: RouteTable<DataPlaneRoute>;
  /** The routes with `refresh_before_expiry`; empty when none has it. */
  refreshRoutes: RefreshRoute[];
  /**
   * `limits.max_in_flight_per_client`, one budget for all pools: a client's origin requests count
   * wherever they go. A reload keeps it (`limits` is restart-only), so kept and new pools share it.
   */
  clientBudget: ClientBudget;
  /** The node's counts (connections in flight, per client), which every thread's routing shares. */
  limits: NodeLimits;
}

/** The node's limits as one thread counts them (node-limits.ts). */
export interface NodeLimits {
  connections: SharedCounters;
  clients: SharedCounters;
}

function createPool(pool: PoolConfig, clientBudget: ClientBudget, limits: NodeLimits): UpstreamPool {
  return new UpstreamPool({
    connectionCounts: limits.connections,
    name: pool.name,
    upstreams: pool.upstreams,
    connectTimeoutMs: pool.connect_timeout,
    responseTimeoutMs: pool.response_timeout,
    connections: pool.connections,
    uploadConnections: pool.upload_connections,
    queueTimeoutMs: pool.queue_timeout,
    clientBudget,
  });
}

/**
 * How long past expiry a response stored through `route` stands in for an origin that gives no answer
 * at all: the route's `cache.stale_if_error`, else the top-level `stale_if_unreachable`.
 */
export function staleIfUnreachableMs(route: Config['routes'][number], config: Pick<Config, 'stale_if_unreachable'>): number {
  return route.cache.stale_if_error ?? config.stale_if_unreachable;
}

/** The same window for a stored entry, found by the label of the route it was stored through. */
export function entryStaleIfUnreachableMs(config: Pick<Config, 'routes' | 'stale_if_unreachable'>, label: string): number {
  const route = config.routes.find((candidate) => routeLabel(candidate) === label);
  return route === undefined ? config.stale_if_unreachable : staleIfUnreachableMs(route, config);
}

/**
 * The routing of `config`. With `previous` (a reload), a pool configured exactly as before is the
 * same UpstreamPool object; the ones that are not reused are listed in `retired`, to be closed once
 * the new routing is in place.
 */
export function buildRouting(config: Config, limits: NodeLimits, previous?: { config: Config; routing: Routing }): Routing & { retired: UpstreamPool[] } {
  const clientBudget = previous?.routing.clientBudget ?? new ClientBudget(limits.clients, config.limits.max_in_flight_per_client);
  const pools = new Map<string, UpstreamPool>();
  for (const pool of config.pools) {
    const before = previous?.config.pools.find((candidate) => candidate.name === pool.name);
    const kept = before !== undefined && isDeepStrictEqual(before, pool) ? previous?.routing.pools.get(pool.name) : undefined;
    pools.set(pool.name, kept ?? createPool(pool, clientBudget, limits));
  }
  const retired = [...(previous?.routing.pools.values() ?? [])].filter((pool) => ![...pools.values()].includes(pool));
  const rules = config.routes.map((route) => ({
    ...route,
    policy: {
      ttlOverrideMs: route.cache.ttl_override,
      staleWhileRevalidateMs: route.cache.stale_while_revalidate,
      staleIfErrorMs: route.cache.stale_if_error,
      staleIfUnreachableMs: staleIfUnreachableMs(route, config),
      maxErrorTtlMs: route.cache.max_error_ttl,
    },
    forwardedMethods: new Set(route.methods),
    strippedFields: new Set(route.strip_request_headers),
  }));
  const refreshRoutes = rules
    .filter((rule) => rule.refresh_before_expiry)
    .map((rule) => ({ label: routeLabel(rule), pool: pools.get(rule.pool)!, policy: rule.policy, minHits: rule.refresh_min_hits }));
  return { pools, routes: new RouteTable<DataPlaneRoute>(rules), refreshRoutes, clientBudget, limits, retired };
}

/** What background refresh is set up with at startup: its routes' labels and popularity gates. */
export function refreshSetup(config: Config): { label: string; minHits: number }[] {
  return config.routes
    .filter((route) => route.refresh_before_expiry)
    .map((route) => ({ label: routeLabel(route), minHits: route.refresh_min_hits }))
    .sort((a, b) => a.label.localeCompare(b.label));
}
