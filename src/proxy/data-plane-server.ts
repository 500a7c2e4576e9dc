// The data-plane listener: every client request is routed, then answered from the cache (GET and
// HEAD on a caching route) or passed through to the origin. A successful unsafe request invalidates
// what it may have changed (RFC 9111 §4.4).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Counter } from 'prom-client';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import type { TieredCache } from '../cache/tiered-cache.js';
import { invalidationTargets } from '../cache/policy/unsafe-invalidation.js';
import type { Logger } from '../observe/logger.js';
import type { MatchedRoute, RouteTable, RouteRule } from './route-table.js';
import { Exchange, type ExchangeDeps } from './exchange.js';
import type { CacheFlow, CachingRoute } from './cache-flow.js';
import type { RouteCacheOptions } from '../cache/policy/route-cache-options.js';
import type { FillLayer } from '../fill/fill-layer.js';
import { headersFromIncoming } from '../cache/policy/header-lookup.js';
import { passThrough } from './pass-through.js';
import { sendProxyError } from './respond.js';

export interface DataPlaneRoute extends RouteRule {
  cache: { enabled: boolean };
  /** The route's cache options as the caching policy takes them (durations in ms). */
  policy: RouteCacheOptions;
}

export interface DataPlaneDeps extends ExchangeDeps {
  routes: RouteTable<DataPlaneRoute>;
  pools: ReadonlyMap<string, UpstreamPool>;
  cacheFlow: CacheFlow;
  /** Pass-through answers stream through unshared fills (bounded read-ahead, write-idle timeout). */
  fills: FillLayer;
  cache: TieredCache;
  logger: Logger;
  isDraining: () => boolean;
  smugglingRejected: Counter;
}

/** llhttp errors that mean the request's framing is ambiguous: the signs of request smuggling. */
const SMUGGLING_CODES = new Set([
  'HPE_UNEXPECTED_CONTENT_LENGTH',
  'HPE_INVALID_TRANSFER_ENCODING',
  'HPE_INVALID_CONTENT_LENGTH',
  'HPE_CHUNK_EXTENSIONS_OVERFLOW',
  'HPE_INVALID_CHUNK_SIZE',
]);

/** The request's host without port, lower-case (`[::1]:8080` gives `[::1]`). */
function requestHost(request: IncomingMessage): string {
  const host = request.headers.host ?? '';
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : host.indexOf(':');
  return (end > 0 ? host.slice(0, end) : host).toLowerCase();
}

function requestPath(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function createDataPlaneServer(deps: DataPlaneDeps): Server {
  // One CachingRoute per route, made on first use rather than per request.
  const cachingRoutes = new Map<MatchedRoute<DataPlaneRoute>, CachingRoute>();
  const cachingRouteOf = (route: MatchedRoute<DataPlaneRoute>): CachingRoute => {
    let caching = cachingRoutes.get(route);
    if (!caching) {
      caching = { label: route.label, pool: deps.pools.get(route.rule.pool)!, policy: route.rule.policy };
      cachingRoutes.set(route, caching);
    }
    return caching;
  };
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    const exchange = new Exchange(request, response, deps);
    let pending: Promise<unknown> | undefined;
    try {
      pending = handle(deps, exchange, cachingRouteOf);
    } catch (error) {
      failRequest(deps, exchange, error);
    }
    // A hit was answered synchronously: settle it now, with no promise and no closure.
    if (pending) pending.catch((error: unknown) => failRequest(deps, exchange, error)).finally(() => exchange.settle());
    else exchange.settle();
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
    if (error.code !== undefined && SMUGGLING_CODES.has(error.code)) deps.smugglingRejected.inc();
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

/** A handler threw: a 500 when nothing was sent yet, else the connection is cut mid-response. */
function failRequest(deps: DataPlaneDeps, exchange: Exchange, error: unknown): void {
  const { request, response } = exchange;
  deps.logger.error({ err: error, path: requestPath(request) }, 'data-plane request failed');
  if (!response.headersSent) {
    response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    response.end('svc: internal error\n');
  } else response.destroy();
}

/** Routes one request; returns the promise of its answer only when it is not answered already. */
function handle(
  deps: DataPlaneDeps,
  exchange: Exchange,
  cachingRouteOf: (route: MatchedRoute<DataPlaneRoute>) => CachingRoute,
): Promise<unknown> | undefined {
  const { request, response } = exchange;
  if (deps.isDraining()) response.shouldKeepAlive = false;
  const route = deps.routes.match(requestHost(request), requestPath(request));
  if (!route) {
    sendProxyError(exchange, 404, `no route for ${request.headers.host ?? ''}${requestPath(request)}`);
    return undefined;
  }
  exchange.routeLabel = route.label;
  const method = request.method ?? 'GET';
  if ((method === 'GET' || method === 'HEAD') && route.rule.cache.enabled) return deps.cacheFlow.handle(exchange, cachingRouteOf(route));
  return forward(deps, exchange, deps.pools.get(route.rule.pool)!, method);
}

/** Passes a request the cache does not answer to the origin; a successful unsafe one invalidates. */
async function forward(deps: DataPlaneDeps, exchange: Exchange, pool: UpstreamPool, method: string): Promise<void> {
  const { request } = exchange;
  const answered = await passThrough(deps.fills, pool, exchange, request);
  if (!answered) return;
  const targets = invalidationTargets(method, answered.status, `http://${request.headers.host ?? ''}${request.url ?? '/'}`, headersFromIncoming(answered.headers));
  for (const key of targets) deps.cache.delete(key);
}
