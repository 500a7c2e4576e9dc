// Everything the cache policy stores with a response, computed once so the hit path only reads fields.

import type { CacheEntry } from '../entry.js';
import { correctedInitialAgeMs } from './age.js';
import { freshnessLifetime } from './freshness.js';
import type { HeaderLookup } from './header-lookup.js';
import type { RouteCacheOptions } from './route-cache-options.js';
import { staleWindows } from './stale-windows.js';
import { effectiveCacheControl, type EffectiveCacheControl } from './targeted-cache-control.js';

/** Exactly the policy fields of a CacheEntry. */
export type ResponseDescription = Pick<
  CacheEntry,
  | 'correctedInitialAgeMs'
  | 'freshnessLifetimeMs'
  | 'staleWhileRevalidateMs'
  | 'staleIfErrorMs'
  | 'mustRevalidate'
  | 'noCache'
  | 'etag'
  | 'lastModified'
>;

export interface DescribeInput extends RouteCacheOptions {
  readonly status: number;
  /** When the origin request was sent (RFC 9111 §4.2.3 request_time), ms since the epoch. */
  readonly requestTimeMs: number;
  /** When the response arrived (response_time), ms since the epoch. */
  readonly responseTimeMs: number;
  /** The effective cache control when already computed (e.g. for canStore); read from `headers` if not. */
  readonly control?: EffectiveCacheControl | undefined;
}

/**
 * Describes a response from its header fields and timing, with the route's cache options. Also used
 * after a 304 with the merged fields, which refreshes freshness (RFC 9111 §4.3.4); pass the 304's
 * targeted fields too if the stored list lacks them, since they govern freshness.
 * Under a route's ttl_override the lifetime is the override plus the age the response already had, so
 * the entry stays fresh in svc for the whole override while its Age header stays truthful (§4.2.3).
 */
export function describeResponse(headers: HeaderLookup, input: DescribeInput): ResponseDescription {
  const { status, requestTimeMs, responseTimeMs } = input;
  const control = input.control ?? effectiveCacheControl(headers);
  const initialAgeMs = correctedInitialAgeMs(headers('age'), headers('date'), requestTimeMs, responseTimeMs);
  const freshness = freshnessLifetime(status, headers, control, responseTimeMs, input);
  const windows = staleWindows(control, input);
  return {
    correctedInitialAgeMs: initialAgeMs,
    freshnessLifetimeMs: freshness.source === 'ttl_override' ? freshness.lifetimeMs + initialAgeMs : freshness.lifetimeMs,
    staleWhileRevalidateMs: windows.staleWhileRevalidateMs,
    staleIfErrorMs: windows.staleIfErrorMs,
    mustRevalidate: windows.mustRevalidate,
    noCache: windows.noCache,
    etag: headers('etag')?.trim(),
    lastModified: headers('last-modified')?.trim(),
  };
}
