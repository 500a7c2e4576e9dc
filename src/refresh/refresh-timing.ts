// When a stored entry expires and when its background refresh is due: plain functions of the entry's
// freshness facts (RFC 9111 §4.2), so the scheduler only compares numbers.
import type { CacheEntry } from '../cache/entry.js';

type TimedEntry = Pick<CacheEntry, 'responseTimeMs' | 'correctedInitialAgeMs' | 'freshnessLifetimeMs'>;

/**
 * 0.9: an entry is refreshed once 90% of its freshness lifetime has passed, as Akamai's prefresh does
 * by default. The last 10% leaves room for a slow origin, a retry after a full semaphore or an empty
 * token bucket, and a timer that fires late, while spending at most one origin request per lifetime.
 */
export const DEFAULT_REFRESH_AT_FRACTION = 0.9;

/**
 * The instant (ms since the epoch) the entry stops being fresh: its current_age (§4.2.3) reaches the
 * freshness lifetime. current_age grows from corrected_initial_age at response_time, so that is
 * response_time + lifetime − corrected_initial_age.
 */
export function expiresAtMs(entry: TimedEntry): number {
  return entry.responseTimeMs + entry.freshnessLifetimeMs - entry.correctedInitialAgeMs;
}

/** The instant the entry's current_age reaches `fraction` of its freshness lifetime. */
export function refreshDueAtMs(entry: TimedEntry, fraction: number = DEFAULT_REFRESH_AT_FRACTION): number {
  return entry.responseTimeMs + Math.floor(entry.freshnessLifetimeMs * fraction) - entry.correctedInitialAgeMs;
}
