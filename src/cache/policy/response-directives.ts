// What a response's cache directives mean to a shared cache (RFC 9111 §5.2.2, RFC 5861, RFC 8246),
// read once from the parsed directives so later decisions are plain field reads.

import { parseDeltaSeconds, parseFieldNameList, type CacheControlDirectives } from './cache-control.js';

export interface ResponseDirectives {
  /** `max-age` in ms; an invalid argument reads as 0 (stale), as RFC 9111 §4.2.1 encourages. */
  readonly maxAgeMs: number | undefined;
  /** `s-maxage` in ms, same invalid-argument rule as `max-age`. */
  readonly sMaxAgeMs: number | undefined;
  readonly noStore: boolean;
  /** Unqualified `no-cache`: every reuse needs a successful validation (§5.2.2.4). */
  readonly noCache: boolean;
  /** Fields named by `no-cache="…"`: not sent on a reuse without validation; svc does not store them. */
  readonly noCacheFields: readonly string[];
  /** Unqualified `private`: a shared cache must not store the response (§5.2.2.7). */
  readonly private: boolean;
  /** Fields named by `private="…"`: a shared cache must not store those fields. */
  readonly privateFields: readonly string[];
  readonly public: boolean;
  readonly mustRevalidate: boolean;
  readonly proxyRevalidate: boolean;
  readonly mustUnderstand: boolean;
  readonly immutable: boolean;
  /** RFC 5861 `stale-while-revalidate` in ms; an invalid argument is ignored. */
  readonly staleWhileRevalidateMs: number | undefined;
  /** RFC 5861 `stale-if-error` in ms; an invalid argument is ignored. */
  readonly staleIfErrorMs: number | undefined;
}

/** Directives of a response that carries no cache control at all. */
export const NO_RESPONSE_DIRECTIVES: ResponseDirectives = {
  maxAgeMs: undefined,
  sMaxAgeMs: undefined,
  noStore: false,
  noCache: false,
  noCacheFields: [],
  private: false,
  privateFields: [],
  public: false,
  mustRevalidate: false,
  proxyRevalidate: false,
  mustUnderstand: false,
  immutable: false,
  staleWhileRevalidateMs: undefined,
  staleIfErrorMs: undefined,
};

function freshnessMs(directives: CacheControlDirectives, name: string): number | undefined {
  if (!directives.has(name)) return undefined;
  const seconds = parseDeltaSeconds(directives.get(name));
  return seconds === undefined ? 0 : seconds * 1000;
}

function optionalMs(directives: CacheControlDirectives, name: string): number | undefined {
  const seconds = parseDeltaSeconds(directives.get(name));
  return seconds === undefined ? undefined : seconds * 1000;
}

export function responseDirectives(directives: CacheControlDirectives): ResponseDirectives {
  if (directives.size === 0) return NO_RESPONSE_DIRECTIVES;
  const noCache = directives.get('no-cache');
  const privateValue = directives.get('private');
  return {
    maxAgeMs: freshnessMs(directives, 'max-age'),
    sMaxAgeMs: freshnessMs(directives, 's-maxage'),
    noStore: directives.has('no-store'),
    noCache: noCache === null,
    noCacheFields: parseFieldNameList(noCache),
    private: privateValue === null,
    privateFields: parseFieldNameList(privateValue),
    public: directives.has('public'),
    mustRevalidate: directives.has('must-revalidate'),
    proxyRevalidate: directives.has('proxy-revalidate'),
    mustUnderstand: directives.has('must-understand'),
    immutable: directives.has('immutable'),
    staleWhileRevalidateMs: optionalMs(directives, 'stale-while-revalidate'),
    staleIfErrorMs: optionalMs(directives, 'stale-if-error'),
  };
}
