// Request cache directives (RFC 9111 §5.2.1) and the Pragma fallback (§5.4).

import { parseCacheControl, parseDeltaSeconds } from './cache-control.js';
import type { HeaderLookup } from './header-lookup.js';

export interface RequestDirectives {
  /** `max-age`: the client wants a response no older than this. */
  readonly maxAgeMs: number | undefined;
  /** `max-stale`: the client accepts this much staleness; Infinity when given without a value. */
  readonly maxStaleMs: number | undefined;
  /** `min-fresh`: the client wants a response that stays fresh at least this long. */
  readonly minFreshMs: number | undefined;
  /** `no-cache` (or `Pragma: no-cache` without Cache-Control): validate before reusing. */
  readonly noCache: boolean;
  /** `no-store`: neither the request nor its response may be stored. */
  readonly noStore: boolean;
  /** `only-if-cached`: answer from the cache or with 504, never contact the origin. */
  readonly onlyIfCached: boolean;
}

export const NO_REQUEST_DIRECTIVES: RequestDirectives = {
  maxAgeMs: undefined,
  maxStaleMs: undefined,
  minFreshMs: undefined,
  noCache: false,
  noStore: false,
  onlyIfCached: false,
};

function hasNoCachePragma(pragma: string): boolean {
  let start = 0;
  for (let i = 0; i <= pragma.length; i++) {
    if (i === pragma.length || pragma.charCodeAt(i) === 44) {
      if (pragma.slice(start, i).trim().toLowerCase() === 'no-cache') return true;
      start = i + 1;
    }
  }
  return false;
}

function ms(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1000;
}

/**
 * Reads a request's directives. Arguments that are not delta-seconds are ignored (a client that
 * cannot spell its wish gets the default behaviour); `max-stale` without an argument means any
 * staleness (§5.2.1.2).
 */
export function requestDirectives(headers: HeaderLookup): RequestDirectives {
  const cacheControl = headers('cache-control');
  if (cacheControl === undefined) {
    const pragma = headers('pragma');
    if (pragma !== undefined && hasNoCachePragma(pragma)) return { ...NO_REQUEST_DIRECTIVES, noCache: true };
    return NO_REQUEST_DIRECTIVES;
  }
  const directives = parseCacheControl(cacheControl);
  if (directives.size === 0) return NO_REQUEST_DIRECTIVES;
  const maxStale = directives.get('max-stale');
  return {
    maxAgeMs: ms(parseDeltaSeconds(directives.get('max-age'))),
    maxStaleMs: maxStale === undefined ? undefined : maxStale === null ? Infinity : ms(parseDeltaSeconds(maxStale)),
    minFreshMs: ms(parseDeltaSeconds(directives.get('min-fresh'))),
    noCache: directives.has('no-cache'),
    noStore: directives.has('no-store'),
    onlyIfCached: directives.has('only-if-cached'),
  };
}
