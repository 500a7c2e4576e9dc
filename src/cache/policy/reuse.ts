// Whether a stored response may answer a request (RFC 9111 §4, §4.2.4, §5.2.1; RFC 5861).

import type { CacheEntry } from '../entry.js';
import { currentAgeMs } from './age.js';
import { NO_REQUEST_DIRECTIVES, type RequestDirectives } from './request-directives.js';

export type ReuseEntry = Pick<
  CacheEntry,
  | 'correctedInitialAgeMs'
  | 'responseTimeMs'
  | 'freshnessLifetimeMs'
  | 'staleWhileRevalidateMs'
  | 'staleIfErrorMs'
  | 'mustRevalidate'
  | 'noCache'
  | 'forcedStale'
>;

/**
 * - `fresh`: serve it (X-Cache HIT);
 * - `stale_acceptable`: stale, but within the client's `max-stale`: serve it (X-Cache STALE);
 * - `stale_while_revalidate`: serve it (X-Cache STALE) and revalidate in the background;
 * - `revalidate`: a conditional request to the origin must succeed before it is served;
 * - `gateway_timeout`: `only-if-cached` and nothing usable without the origin: answer 504 (§5.2.1.7).
 */
export type ReuseAction = 'fresh' | 'stale_acceptable' | 'stale_while_revalidate' | 'revalidate' | 'gateway_timeout';

export interface ReuseDecision {
  readonly action: ReuseAction;
  /** current_age at the decision, in ms, for the Age header. */
  readonly ageMs: number;
  /** Whether the stored response may be served if the origin fails (refused, timed out, 5xx). */
  readonly staleIfError: boolean;
}

/**
 * Decides reuse at `nowMs`. svc choices where the RFCs leave room:
 * - `forcedStale` (refresh, a soft purge) makes the entry stale at once; the client's max-stale is
 *   not honoured for it (the operator asked for new content), but the stale-while-revalidate and
 *   stale-if-error windows are, counted from the entry's natural expiry or from now if that is later;
 * - a request's `max-age` or `min-fresh` that the entry fails sends it to revalidation rather than
 *   stale-while-revalidate, since the client asked for something newer;
 * - response `no-cache`, must-revalidate, proxy-revalidate and s-maxage (all folded into the entry's
 *   `noCache` / `mustRevalidate`) forbid every stale answer, stale-if-error included (§4.2.4);
 * - request `no-cache` is a preference (§5.2.1.4): it forces revalidation, but a stored response that
 *   may be served stale may still answer if the origin fails.
 */
export function decideReuse(request: RequestDirectives, entry: ReuseEntry, nowMs: number): ReuseDecision {
  const ageMs = currentAgeMs(entry, nowMs);
  const lifetimeMs = entry.freshnessLifetimeMs;
  const fresh = !entry.forcedStale && lifetimeMs > ageMs;
  const stalenessMs = Math.max(0, ageMs - lifetimeMs);
  const staleForbidden = entry.mustRevalidate || entry.noCache;
  const staleIfError =
    !staleForbidden && (fresh || (entry.staleIfErrorMs > 0 && stalenessMs <= entry.staleIfErrorMs));
  const tooOld =
    (request.maxAgeMs !== undefined && ageMs > request.maxAgeMs) ||
    (request.minFreshMs !== undefined && lifetimeMs - ageMs < request.minFreshMs);

  let action: ReuseAction = 'revalidate';
  if (entry.noCache || request.noCache) {
    action = 'revalidate';
  } else if (fresh) {
    action = tooOld ? 'revalidate' : 'fresh';
  } else if (staleForbidden || (request.maxAgeMs !== undefined && ageMs > request.maxAgeMs)) {
    action = 'revalidate';
  } else if (!entry.forcedStale && request.maxStaleMs !== undefined && stalenessMs <= request.maxStaleMs) {
    action = 'stale_acceptable';
  } else if (!tooOld && entry.staleWhileRevalidateMs > 0 && stalenessMs <= entry.staleWhileRevalidateMs) {
    action = 'stale_while_revalidate';
  }
  if (action === 'revalidate' && request.onlyIfCached) action = 'gateway_timeout';
  return { action, ageMs, staleIfError };
}

/** Whether an entry may still be served when the origin fails at `nowMs` (RFC 5861 §4). */
export function staleIfErrorAllowed(entry: ReuseEntry, nowMs: number): boolean {
  return decideReuse(NO_REQUEST_DIRECTIVES, entry, nowMs).staleIfError;
}

/**
 * Whether an entry may stand in for an origin that gave no answer at all (refused, reset, timed out,
 * unparsable) at `nowMs`: within the entry's own stale-if-error window, or within
 * `unreachableWindowMs` (the route's `cache.stale_if_error`, or the top-level `stale_if_unreachable`)
 * past its expiry. RFC 9111 §4.2.4 lets a disconnected cache serve stale without a directive, and
 * forbids it when no-cache, must-revalidate, proxy-revalidate or s-maxage say otherwise.
 */
export function staleIfUnreachableAllowed(entry: ReuseEntry, nowMs: number, unreachableWindowMs: number): boolean {
  if (entry.mustRevalidate || entry.noCache) return false;
  if (staleIfErrorAllowed(entry, nowMs)) return true;
  return Math.max(0, currentAgeMs(entry, nowMs) - entry.freshnessLifetimeMs) <= unreachableWindowMs && unreachableWindowMs > 0;
}
