// Small builders shared by the policy tests: header lookups from plain objects, and stored entries.

import type { CacheEntry } from '../../../src/cache/entry.js';
import { headersFromIncoming, type HeaderLookup } from '../../../src/cache/policy/header-lookup.js';

/** A lookup over lower-case field names. */
export function fields(values: Record<string, string | string[]> = {}): HeaderLookup {
  return headersFromIncoming(values);
}

export const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

/** The IMF-fixdate of `ms`. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

export function entry(overrides: Partial<CacheEntry> = {}): CacheEntry {
  return {
    key: 'http://example.com/',
    variantKey: '',
    varyNames: [],
    status: 200,
    headers: [],
    body: Buffer.alloc(0),
    requestTimeMs: T0,
    responseTimeMs: T0,
    correctedInitialAgeMs: 0,
    freshnessLifetimeMs: 60_000,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 0,
    mustRevalidate: false,
    noCache: false,
    etag: undefined,
    lastModified: undefined,
    tags: [],
    forcedStale: false,
    surrogateControl: undefined,
    route: 'default',
    ...overrides,
  };
}
