// Freshness lifetime of a response (RFC 9111 §4.2.1, §4.2.2).

import type { HeaderLookup } from './header-lookup.js';
import { parseHttpDate } from '../../http/http-date.js';
import { HEURISTICALLY_CACHEABLE_STATUSES } from './status-codes.js';
import type { EffectiveCacheControl } from './targeted-cache-control.js';

/** Where a lifetime came from: a route override, a directive, Expires, a heuristic, or nothing. */
export type FreshnessSource = 'ttl_override' | 's-maxage' | 'max-age' | 'expires' | 'heuristic' | 'none';

export interface Freshness {
  readonly lifetimeMs: number;
  readonly source: FreshnessSource;
}

export interface FreshnessOptions {
  /** A route's `cache.ttl_override`: the lifetime in svc whatever the origin says (spec §2.3). */
  readonly ttlOverrideMs?: number | undefined;
  /** Share of (Date − Last-Modified) used as a heuristic lifetime; RFC 9111 §4.2.2 suggests 10%. */
  readonly heuristicFraction?: number;
  /** Upper bound of a heuristic lifetime. */
  readonly heuristicMaxMs?: number;
  /** A route's `cache.max_error_ttl`: bound of the lifetime of a capped error (isCappedError). */
  readonly maxErrorTtlMs?: number | undefined;
}

/**
 * A 4xx or 5xx that RFC 9110 §15.1 does not call heuristically cacheable (400, 403, 500, 503…): svc
 * stores it only with explicit freshness, and for at most the route's `max_error_ttl`, so that an
 * error an attacker provoked (or an origin's bad minute) cannot be served to everyone for long.
 */
export function isCappedError(status: number): boolean {
  return status >= 400 && status <= 599 && !HEURISTICALLY_CACHEABLE_STATUSES.has(status);
}

/** RFC 9111 §4.2.2's "typical setting" of 10% of the time since the last modification. */
export const DEFAULT_HEURISTIC_FRACTION = 0.1;
/**
 * 24 hours: RFC 7234 §4.2.2 required a warning on heuristic responses older than a day; RFC 9111
 * dropped warnings, and svc keeps the bound so no heuristic entry outlives a day without validation.
 */
export const DEFAULT_HEURISTIC_MAX_MS = 24 * 60 * 60 * 1000;

/**
 * The freshness lifetime svc gives a response, in order: the route's ttl_override; `s-maxage`
 * (shared caches only); `max-age`; Expires − Date (an invalid Expires means already expired, and
 * Expires is ignored when a targeted field governs, RFC 9213 §2.2); a heuristic when there is no
 * explicit expiry and the status is heuristically cacheable. A capped error's lifetime is bounded by
 * `maxErrorTtlMs`.
 * Date falls back to the receipt time when absent or invalid (RFC 9110 §6.6.1).
 */
export function freshnessLifetime(
  status: number,
  headers: HeaderLookup,
  control: EffectiveCacheControl,
  responseTimeMs: number,
  options: FreshnessOptions = {},
): Freshness {
  if (options.ttlOverrideMs !== undefined) return { lifetimeMs: options.ttlOverrideMs, source: 'ttl_override' };
  const freshness = explicitOrHeuristic(status, headers, control, responseTimeMs, options);
  if (options.maxErrorTtlMs !== undefined && isCappedError(status) && freshness.lifetimeMs > options.maxErrorTtlMs) {
    return { lifetimeMs: options.maxErrorTtlMs, source: freshness.source };
  }
  return freshness;
}

function explicitOrHeuristic(
  status: number,
  headers: HeaderLookup,
  control: EffectiveCacheControl,
  responseTimeMs: number,
  options: FreshnessOptions,
): Freshness {
  const { directives } = control;
  if (directives.sMaxAgeMs !== undefined) return { lifetimeMs: directives.sMaxAgeMs, source: 's-maxage' };
  if (directives.maxAgeMs !== undefined) return { lifetimeMs: directives.maxAgeMs, source: 'max-age' };
  if (control.source === 'cache-control') {
    const expires = headers('expires');
    if (expires !== undefined) {
      const expiresMs = parseHttpDate(expires);
      if (expiresMs === undefined) return { lifetimeMs: 0, source: 'expires' };
      const dateMs = parseHttpDate(headers('date')) ?? responseTimeMs;
      return { lifetimeMs: Math.max(0, expiresMs - dateMs), source: 'expires' };
    }
  }
  // RFC 9111 §4.2.2 also allows a heuristic for other statuses marked `public`; svc does not: a status
  // that is not heuristically cacheable needs explicit freshness to be stored.
  if (HEURISTICALLY_CACHEABLE_STATUSES.has(status)) {
    const lastModifiedMs = parseHttpDate(headers('last-modified'));
    if (lastModifiedMs !== undefined) {
      const dateMs = parseHttpDate(headers('date')) ?? responseTimeMs;
      if (dateMs > lastModifiedMs) {
        const fraction = options.heuristicFraction ?? DEFAULT_HEURISTIC_FRACTION;
        const maxMs = options.heuristicMaxMs ?? DEFAULT_HEURISTIC_MAX_MS;
        return { lifetimeMs: Math.min(Math.floor((dateMs - lastModifiedMs) * fraction), maxMs), source: 'heuristic' };
      }
    }
  }
  return { lifetimeMs: 0, source: 'none' };
}
