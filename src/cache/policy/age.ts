// Age calculations (RFC 9111 §4.2.3) and the Age header value (§5.1).

import type { CacheEntry } from '../entry.js';
import { DELTA_SECONDS_MAX, parseDeltaSeconds } from './cache-control.js';
import { parseHttpDate } from '../../http/http-date.js';

/**
 * `corrected_initial_age` in ms: the larger of the apparent age (receipt time − Date) and the
 * upstream Age plus the response delay. An absent or invalid Date gives no apparent age; an absent or
 * invalid Age counts as 0 (§4.2.3 "0 if not available"); a list keeps its first member (§4.2.1).
 */
export function correctedInitialAgeMs(
  ageHeader: string | undefined,
  dateHeader: string | undefined,
  requestTimeMs: number,
  responseTimeMs: number,
): number {
  const dateMs = parseHttpDate(dateHeader);
  const apparentAgeMs = dateMs === undefined ? 0 : Math.max(0, responseTimeMs - dateMs);
  let ageValue = ageHeader;
  if (ageValue !== undefined) {
    const comma = ageValue.indexOf(',');
    ageValue = (comma < 0 ? ageValue : ageValue.slice(0, comma)).trim();
  }
  const ageMs = (parseDeltaSeconds(ageValue) ?? 0) * 1000;
  const responseDelayMs = Math.max(0, responseTimeMs - requestTimeMs);
  return Math.max(apparentAgeMs, ageMs + responseDelayMs);
}

/** `current_age` in ms at `nowMs`; never negative, even when the clock stepped back. */
export function currentAgeMs(
  entry: Pick<CacheEntry, 'correctedInitialAgeMs' | 'responseTimeMs'>,
  nowMs: number,
): number {
  return entry.correctedInitialAgeMs + Math.max(0, nowMs - entry.responseTimeMs);
}

/** The `Age` field value at `nowMs`: whole seconds (§5.1), capped at 2^31 (§1.2.2). */
export function ageSeconds(entry: Pick<CacheEntry, 'correctedInitialAgeMs' | 'responseTimeMs'>, nowMs: number): number {
  return Math.min(Math.floor(currentAgeMs(entry, nowMs) / 1000), DELTA_SECONDS_MAX);
}
