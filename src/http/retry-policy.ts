// When a failed call to an HTTP API (a CDN's, spec §6.3, §7, §8; a trace collector's) is tried again,
// as pure functions: 429, 5xx and network errors are retried, at most MAX_RETRIES times per call in all;
// any other 4xx is not. Waits grow
// exponentially with "equal jitter" (half fixed, half random: AWS Architecture Blog, "Exponential
// Backoff and Jitter", 2015), and a 429's Retry-After is a floor the jitter is added to.
import { parseHttpDate } from './http-date.js';
import type { CallResult } from './call-result.js';

/** Spec §8: 3 retries per call for 429, 5xx and network errors. */
export const MAX_RETRIES = 3;
/** The first back-off: 1 s, then 2 s and 4 s, each between half and all of it. */
export const BACKOFF_BASE_MS = 1_000;
/**
 * The longest Retry-After waited for within one call. A CDN asking for more is out of budget for
 * the next minute: the call ends, its purges stay pending, and the queue's cool-down honours it.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The exponential back-off before retry number `retry` (1-based), before jitter. */
export function backoffMs(retry: number): number {
  return BACKOFF_BASE_MS * 2 ** (retry - 1);
}

/**
 * How long to wait before retry number `retry` (1-based) of a call that answered `result`, or
 * undefined when it is not retried. `random` is uniform in [0, 1).
 */
export function retryDelayMs(result: CallResult, retry: number, random: () => number): number | undefined {
  if (retry > MAX_RETRIES) return undefined;
  const backoff = backoffMs(retry);
  switch (result.outcome) {
    case 'ok':
    case 'refused':
    case 'aborted':
      return undefined;
    case 'rate_limited':
      if (result.retryAfterMs === undefined) return backoff / 2 + (random() * backoff) / 2;
      if (result.retryAfterMs > MAX_RETRY_AFTER_MS) return undefined;
      return result.retryAfterMs + (random() * backoff) / 2;
    case 'server_error':
    case 'network_error':
      return backoff / 2 + (random() * backoff) / 2;
  }
}

/**
 * The Retry-After field (RFC 9110 §10.2.3) in ms from `nowMs`: delay-seconds or an HTTP-date (a date
 * in the past is 0); undefined when absent or unreadable.
 */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const dateMs = parseHttpDate(text);
  return dateMs === undefined ? undefined : Math.max(0, dateMs - nowMs);
}
