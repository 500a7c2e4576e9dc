// What a plain GET (no request directives) does with a stored response at a moment, and how long
// each of the windows in which a stale response may still be served has left: for an operator who
// asks what svc holds (`GET /v1/debug/cachecheck`, `svc inspect`). It reads the same decision the
// data plane makes (reuse.ts), so the two cannot disagree.
import { currentAgeMs } from './age.js';
import { NO_REQUEST_DIRECTIVES } from './request-directives.js';
import { decideReuse, type ReuseEntry } from './reuse.js';

/**
 * - `fresh`: answered from the cache (X-Cache HIT);
 * - `stale`: answered from the cache as STALE while svc revalidates it in the background
 *   (within stale-while-revalidate);
 * - `expired`: stale beyond any stale-while-revalidate window (or refreshed, or stale-serving is
 *   forbidden): the origin is asked first, conditionally when the response has a validator, and a
 *   304 keeps it (REVALIDATED); it is served STALE only while a window for a failing origin lasts;
 * - `no_cache`: stored with `no-cache`: every use is validated with the origin first.
 */
export type ReuseState = 'fresh' | 'stale' | 'expired' | 'no_cache';

export interface ReuseOutlook {
  readonly state: ReuseState;
  /** Left of the stale-while-revalidate window, which starts at expiry; 0 when none is left. */
  readonly staleWhileRevalidateLeftMs: number;
  /** Left of the window in which it is served STALE when the origin answers an error (stale-if-error). */
  readonly staleIfErrorLeftMs: number;
  /**
   * Left of the window in which it stands in for an origin that gives no answer at all: stale-if-error,
   * or the route's `cache.stale_if_error` / the top-level `stale_if_unreachable`, whichever is longer.
   */
  readonly staleIfUnreachableLeftMs: number;
}

/** `unreachableWindowMs`: the route's `cache.stale_if_error`, else `stale_if_unreachable` (routing.ts). */
export function reuseOutlook(entry: ReuseEntry, nowMs: number, unreachableWindowMs: number): ReuseOutlook {
  const decision = decideReuse(NO_REQUEST_DIRECTIVES, entry, nowMs);
  const state: ReuseState =
    decision.action === 'fresh' ? 'fresh' : decision.action === 'stale_while_revalidate' ? 'stale' : entry.noCache ? 'no_cache' : 'expired';
  // The same measure decideReuse counts its windows in: time past expiry, 0 while fresh.
  const stalenessMs = Math.max(0, currentAgeMs(entry, nowMs) - entry.freshnessLifetimeMs);
  const left = (windowMs: number): number => Math.max(0, windowMs - stalenessMs);
  if (entry.mustRevalidate || entry.noCache) {
    return { state, staleWhileRevalidateLeftMs: 0, staleIfErrorLeftMs: 0, staleIfUnreachableLeftMs: 0 };
  }
  const staleIfErrorLeftMs = left(entry.staleIfErrorMs);
  return {
    state,
    staleWhileRevalidateLeftMs: state === 'expired' ? 0 : left(entry.staleWhileRevalidateMs),
    staleIfErrorLeftMs,
    staleIfUnreachableLeftMs: Math.max(staleIfErrorLeftMs, left(unreachableWindowMs)),
  };
}
