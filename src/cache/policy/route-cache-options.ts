// The per-route settings that change svc's caching policy (spec §2.3 `routes[].cache`), in ms.

import type { FreshnessOptions } from './freshness.js';

export interface RouteCacheOptions extends FreshnessOptions {
  /** `cache.stale_while_revalidate`: replaces the origin's directive when set. */
  readonly staleWhileRevalidateMs?: number | undefined;
  /** `cache.stale_if_error`: replaces the origin's directive when set. */
  readonly staleIfErrorMs?: number | undefined;
}
