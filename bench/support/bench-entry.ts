// A cache entry for the benchmarks that fill a tier directly: a cacheable 200 with a few header fields.
import type { CacheEntry } from '../../src/cache/entry.js';

export interface BenchEntryParts {
  key: string;
  body: Buffer;
  tags?: readonly string[];
  requestTimeMs: number;
}

export function benchEntry(parts: BenchEntryParts): CacheEntry {
  return {
    key: parts.key,
    variantKey: '',
    varyNames: [],
    status: 200,
    headers: ['content-type', 'text/html; charset=utf-8', 'cache-control', 'public, max-age=3600', 'etag', '"abc"'],
    body: parts.body,
    requestTimeMs: parts.requestTimeMs,
    responseTimeMs: parts.requestTimeMs + 20,
    correctedInitialAgeMs: 0,
    freshnessLifetimeMs: 3_600_000,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 0,
    mustRevalidate: false,
    noCache: false,
    etag: '"abc"',
    lastModified: undefined,
    surrogateControl: undefined,
    tags: parts.tags ?? [],
    forcedStale: false,
    route: 'bench',
  };
}
