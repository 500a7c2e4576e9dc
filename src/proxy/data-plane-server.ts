// The data-plane listener: every client request is read into validated parts (src/edge/), routed,
// then answered from the cache (GET and HEAD on a caching route) or passed through to the origin. A
// successful unsafe request invalidates what it may have changed (RFC 9111 §4.4). Requests that name
// nothing valid, use a method the route does not forward, or break a limit are refused at the door.
import type { Server } from 'node:http';
import type { Counter } from 'prom-client';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import type { TieredCache } from '../store/tiered-cache.js';
import { invalidationTargets } from '../cache/policy/unsafe-invalidation.js';
import type { Logger } from '../observe/logger.js';
import { isEdgeRejection, readEdgeRequest, type EdgeRequestOptions } from '../edge/client-request.js';
import { createEdgeServer, expectsContinue } from '../edge/edge-server.js';
import type { ListenerLimits } from '../edge/listener-options.js';
import type { TrustedProxies } from '../edge/trusted-proxies.js';
import type { TlsTermination } from '../tls/tls-termination.js';
import type { MatchedRoute, RouteTable, RouteRule } from './route-table.js';
import { Exchange, type ExchangeDeps } from './exchange.js';
import type { CacheFlow } from './cache-flow.js';
import type { CachingRoute } from '../fill/origin-opening.js';
import type { RouteCacheOptions } from '../cache/policy/route-cache-options.js';
import type { FillLayer } from '../fill/fill-layer.js';
import { headersFromIncoming } from '../cache/policy/header-lookup.js';
import { passThrough } from './pass-through.js';
import { edgeOfHanded, type SiblingRouting } from './home-routing.js';
import { dataPlaneErrorBody, rejectRequest, sendProxyError } from './respond.js';
import { closeConnectionAfter, type RequestHandler } from '../http/server-messages.js';

export interface DataPlaneRoute extends RouteRule {
  cache: { enabled: boolean };
  /** The route's cache options as the caching policy takes them (durations in ms). */
  policy: RouteCacheOptions;
  /** `methods`: what is forwarded; anything else gets 405 and never reaches the origin. */
  forwardedMethods: ReadonlySet<string>;
  /** `strip_request_headers`, lower-case. */
  strippedFields: ReadonlySet<string>;
}

export interface DataPlaneDeps extends ExchangeDeps, EdgeRequestOptions {
  /** Read on every request, so that a configuration reload replaces them here (with the pools). */
  routes: RouteTable<DataPlaneRoute>;
  pools: ReadonlyMap<string, UpstreamPool>;
  cacheFlow: CacheFlow;
  /** Pass-through answers stream through unshared fills (bounded read-ahead, write-idle timeout). */
  fills: FillLayer;
  cache: TieredCache;
  logger: Logger;
  isDraining: () => boolean;
  smugglingRejected: Counter;
  limits: ListenerLimits;
  /** `trusted_proxies`, read on every request: a configuration reload replaces it here. */
  trustedProxies: TrustedProxies;
  /** `tls`: the clients' listener terminates TLS (the internal one never does). */
  tls: TlsTermination | undefined;
}

/**
 * How much larger than a client's head a head on the internal listener may be. A sibling hands over
 * a head its door let through, with the node's token and the client's edge as JSON, which holds the
 * target three times more (path and query, path, key), each up to twice as long once escaped (a
 * target of backslashes): at most 7 times the client's head.
 */
const HANDED_HEAD_FACTOR = 8;

/**
 * The data-plane listener. With `internal`, the listener of a thread's own Unix socket: requests a
 * sibling thread hands over carry the client's edge, checked by the node's token (home-routing.ts).
 */
export function createDataPlaneServer(deps: DataPlaneDeps, internal?: Pick<SiblingRouting, 'handedEdge'>): Server {
  // One CachingRoute per route, made on first use rather than per request; weakly held, so the routes
  // of a table a reload replaced are let go.
  const cachingRoutes = new WeakMap<MatchedRoute<DataPlaneRoute>, CachingRoute>();
  const cachingRouteOf = (route: MatchedRoute<DataPlaneRoute>): CachingRoute => {
    let caching = cachingRoutes.get(route);
    if (!caching) {
      caching = { label: route.label, pool: deps.pools.get(route.rule.pool)!, policy: route.rule.policy };
      cachingRoutes.set(route, caching);
    }
    return caching;
  };
  const handler: RequestHandler = (request, response) => {
    const exchange = new Exchange(request, response, deps);
    let pending: Promise<unknown> | undefined;
    try {
      pending = handle(deps, exchange, cachingRouteOf, internal);
    } catch (error) {
      failRequest(exchange, error);
    }
    // A hit was answered synchronously: settle it now, with no promise and no closure.
    if (pending) pending.catch((error: unknown) => failRequest(exchange, error)).finally(() => exchange.settle());
    else exchange.settle();
  };
  return createEdgeServer({
    limits: internal === undefined ? deps.limits : { ...deps.limits, maxHeaderBytes: deps.limits.maxHeaderBytes * HANDED_HEAD_FACTOR },
    fromClients: internal === undefined,
    rejections: deps.rejections,
    smugglingRejected: deps.smugglingRejected,
    errorBody: dataPlaneErrorBody,
    handlerSendsContinue: true,
    tls: internal === undefined ? deps.tls : undefined,
    handler,
    // Clients that choose HTTP/2 over TLS get the same handler: the same cache, the same answers.
    http2Handler: handler,
  });
}

/** A handler threw: a 500 when nothing was sent yet, else the connection is cut mid-response. */
function failRequest(exchange: Exchange, error: unknown): void {
  sendProxyError(exchange, 500, 'the data plane failed to handle the request', { cause: error });
}

/** Routes one request; returns the promise of its answer only when it is not answered already. */
function handle(
  deps: DataPlaneDeps,
  exchange: Exchange,
  cachingRouteOf: (route: MatchedRoute<DataPlaneRoute>) => CachingRoute,
  internal: Pick<SiblingRouting, 'handedEdge'> | undefined,
): Promise<unknown> | undefined {
  const { request, response } = exchange;
  if (deps.isDraining()) closeConnectionAfter(response);
  const handed = internal?.handedEdge(request);
  if (handed === 'refused') {
    rejectRequest(exchange, 403, 'bad_internal_request', { close: true });
    return undefined;
  }
  if (handed !== undefined) exchange.handedFrom = { remote: handed.remote, proto: handed.proto, tls: handed.tls };
  const edge = handed === undefined ? readEdgeRequest(request, deps) : edgeOfHanded(handed);
  if (isEdgeRejection(edge)) {
    // A body may follow that nobody will read: the connection is not reused.
    rejectRequest(exchange, edge.status, edge.reason, { close: true });
    return undefined;
  }
  exchange.edge = edge;
  const route = deps.routes.match(edge.authority.host, edge.path);
  if (!route) {
    rejectRequest(exchange, 404, 'no_route');
    return undefined;
  }
  exchange.routed(route.label);
  const method = request.method ?? 'GET';
  if (!route.rule.forwardedMethods.has(method)) {
    rejectRequest(exchange, 405, 'method_not_allowed', { close: true, headers: { allow: [...route.rule.forwardedMethods].join(', ') } });
    return undefined;
  }
  exchange.forwarding = {
    scheme: edge.scheme,
    host: edge.host,
    peerAddress: edge.peerAddress,
    forwardedFor: edge.forwardedFor,
    forwarded: edge.forwarded,
    strip: route.rule.strippedFields,
  };
  // Accepted on its head alone: the client may now send the body it held back (RFC 9110 §10.1.1).
  if (expectsContinue(request)) response.writeContinue();
  if ((method === 'GET' || method === 'HEAD') && route.rule.cache.enabled) return deps.cacheFlow.handle(exchange, cachingRouteOf(route));
  return forward(deps, exchange, deps.pools.get(route.rule.pool)!, method);
}

/** Passes a request the cache does not answer to the origin; a successful unsafe one invalidates. */
function forward(deps: DataPlaneDeps, exchange: Exchange, pool: UpstreamPool, method: string): Promise<void> {
  return passThrough(deps.fills, pool, exchange, exchange.request, (status, headers) => {
    for (const key of invalidationTargets(method, status, exchange.edge, headersFromIncoming(headers))) deps.cache.delete(key);
  });
}
