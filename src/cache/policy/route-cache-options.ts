// The per-route settings that change svc's caching policy (spec §2.3 `routes[].cache`), in ms.

import type { FreshnessOptions } from './freshness.js';

export interface RouteCacheOptions extends FreshnessOptions {
  /** `cache.stale_while_revalidate`: replaces the origin's directive when set. */
  readonly staleWhileRevalidateMs?: number | undefined;
  /** `cache.stale_if_error`: replaces the origin's directive when set. */
  readonly staleIfErrorMs?: number | undefined;
  /**
   * How long past expiry a stored response may stand in for an origin that does not answer at all:
   * the route's `cache.stale_if_error` when set, otherwise the top-level `stale_if_unreachable`.
   * Read when the origin fails, so it never changes what is stored.
   */
  readonly staleIfUnreachableMs?: number | undefined;
}
