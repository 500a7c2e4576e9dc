// The attributes svc puts on its spans. OpenTelemetry's semantic conventions where one fits
// (`http.request.method`, `url.path`…), `svc.*` for what is svc's own. Nothing a client could hide a
// secret in goes on a span as it was sent: never a header, never the query string; the cache key
// (whose query may carry a token) only as a hash.
import { createHash } from 'node:crypto';

export const ATTR = {
  method: 'http.request.method',
  status: 'http.response.status_code',
  path: 'url.path',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  route: 'svc.route',
  cacheResult: 'svc.cache.result',
  source: 'svc.cache.source',
  keyHash: 'svc.cache.key_hash',
  pool: 'svc.upstream.pool',
  peer: 'svc.peer.node',
} as const;

/**
 * The first 16 hex digits of the SHA-256 of a cache key: enough to find every span of one key
 * (across nodes too) and to match the key `GET /v1/debug/cachecheck` shows, without the key itself.
 * It hides a query's secrets only as well as they resist guessing: a short token can be found by
 * hashing candidates, so URLs should not carry secrets svc caches on anyway.
 */
export function cacheKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** The request target's path without its query. */
export function pathWithoutQuery(target: string): string {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}
