// How long past expiry svc may serve a stored response (RFC 5861, RFC 9111 §4.2.4).

import type { RouteCacheOptions } from './route-cache-options.js';
import type { EffectiveCacheControl } from './targeted-cache-control.js';

export interface StaleWindows {
  readonly staleWhileRevalidateMs: number;
  readonly staleIfErrorMs: number;
  /** must-revalidate, proxy-revalidate or s-maxage: no stale serving at all. */
  readonly mustRevalidate: boolean;
  /** Unqualified response `no-cache`: every reuse needs a successful validation. */
  readonly noCache: boolean;
}

/**
 * A route's `stale_while_revalidate` / `stale_if_error`, when set, replace the origin's directives
 * (the operator's per-route choice wins, whether longer or shorter). must-revalidate,
 * proxy-revalidate and s-maxage (§5.2.2.2, §5.2.2.8, §5.2.2.10) and unqualified no-cache (§5.2.2.4)
 * forbid stale serving, and they win over the route: they are MUSTs. Under a route's ttl_override the
 * origin's Cache-Control is disregarded (spec §2.3), so only the route's windows apply.
 */
export function staleWindows(control: EffectiveCacheControl, route: RouteCacheOptions): StaleWindows {
  if (route.ttlOverrideMs !== undefined) {
    return {
      staleWhileRevalidateMs: route.staleWhileRevalidateMs ?? 0,
      staleIfErrorMs: route.staleIfErrorMs ?? 0,
      mustRevalidate: false,
      noCache: false,
    };
  }
  const { directives } = control;
  const mustRevalidate = directives.mustRevalidate || directives.proxyRevalidate || directives.sMaxAgeMs !== undefined;
  if (mustRevalidate || directives.noCache) {
    return { staleWhileRevalidateMs: 0, staleIfErrorMs: 0, mustRevalidate, noCache: directives.noCache };
  }
  return {
    staleWhileRevalidateMs: route.staleWhileRevalidateMs ?? directives.staleWhileRevalidateMs ?? 0,
    staleIfErrorMs: route.staleIfErrorMs ?? directives.staleIfErrorMs ?? 0,
    mustRevalidate: false,
    noCache: false,
  };
}
