// One stored response: what the hot and warm tiers hold and what the proxy writes to a client.
// Everything the hit path needs is computed once when the response is stored (or revalidated), so a
// hit never re-parses stored headers, never copies the body and never serialises the entry.

export interface CacheEntry {
  /**
   * Primary key (RFC 9111 §2): the target URI without fragment, as `scheme://host[:port]/path?query`,
   * with the scheme and host lower-cased. GET and HEAD share it.
   */
  readonly key: string;
  /**
   * Secondary key (RFC 9111 §4.1): the normalised values of the request header fields named by the
   * response's Vary, in the order of `varyNames`; '' when the response has no Vary.
   */
  readonly variantKey: string;
  /** Request header names (lower-case) listed by the response's Vary; empty when none. */
  readonly varyNames: readonly string[];

  readonly status: number;
  /**
   * Response header fields as received from the origin, flat `[name, value, name, value, …]` with names
   * lower-case (as undici reports them), minus hop-by-hop fields (RFC 9110 §7.6.1). Their values go
   * to the client byte for byte; svc adds only `Age` and `X-Cache` (and drops the surrogate-only
   * fields it consumed).
   */
  readonly headers: readonly string[];
  /** The whole body; never copied on a hit. */
  readonly body: Buffer;

  /** When the origin fetch that produced this response began, ms since the epoch (RFC 9111 §4.2.3
   * `request_time`). Also the instant the lazy ban check compares with a ban's creation time. */
  requestTimeMs: number;
  /** When the response was received (`response_time`), ms since the epoch. */
  responseTimeMs: number;
  /** RFC 9111 §4.2.3 `corrected_initial_age`, in ms. */
  correctedInitialAgeMs: number;
  /** RFC 9111 §4.2.1 freshness lifetime in ms (after CDN-Cache-Control/Surrogate-Control and a
   * route's ttl_override are applied). */
  freshnessLifetimeMs: number;
  /** How long past expiry the entry may be served while it is revalidated in the background. */
  staleWhileRevalidateMs: number;
  /** How long past expiry the entry may be served when the origin fails. */
  staleIfErrorMs: number;
  /** must-revalidate, proxy-revalidate or s-maxage: never served stale without validation
   * (RFC 9111 §5.2.2.2, §5.2.2.8, §5.2.2.10). */
  mustRevalidate: boolean;
  /** Unqualified `no-cache` response directive: every reuse needs a successful validation. */
  noCache: boolean;
  /** `ETag` and `Last-Modified` of the stored response, kept for conditional requests. */
  etag: string | undefined;
  lastModified: string | undefined;
  /** The origin's Surrogate-Control, which steers svc's freshness but never reaches clients; kept so
   * that a 304 without one still describes the entry the same way (RFC 9111 §4.3.4). */
  surrogateControl: string | undefined;
  /** Surrogate keys (spec §1.2) from Surrogate-Key, Cache-Tag or X-Cache-Tags. */
  tags: readonly string[];
  /** Set by refresh (soft purge): the entry is stale from then on whatever its freshness says. */
  forcedStale: boolean;
  /** Route name the entry was stored through, for background refresh and metrics. */
  route: string;
}

/** Bytes an entry costs in memory or on disk: body, header text and key material. */
export function entrySizeBytes(entry: CacheEntry): number {
  let size = entry.body.length + entry.key.length + entry.variantKey.length;
  for (const field of entry.headers) size += field.length;
  for (const tag of entry.tags) size += tag.length;
  return size;
}

/**
 * The entry as a plain object with every field read out: for changing a field (`{ ...fields(entry),
 * forcedStale: true }`) of an entry that may be a view over stored bytes, whose fields are getters
 * that a spread would not copy.
 */
export function entryFields(entry: CacheEntry): CacheEntry {
  return {
    key: entry.key,
    variantKey: entry.variantKey,
    varyNames: entry.varyNames,
    status: entry.status,
    headers: entry.headers,
    body: entry.body,
    requestTimeMs: entry.requestTimeMs,
    responseTimeMs: entry.responseTimeMs,
    correctedInitialAgeMs: entry.correctedInitialAgeMs,
    freshnessLifetimeMs: entry.freshnessLifetimeMs,
    staleWhileRevalidateMs: entry.staleWhileRevalidateMs,
    staleIfErrorMs: entry.staleIfErrorMs,
    mustRevalidate: entry.mustRevalidate,
    noCache: entry.noCache,
    etag: entry.etag,
    lastModified: entry.lastModified,
    surrogateControl: entry.surrogateControl,
    tags: entry.tags,
    forcedStale: entry.forcedStale,
    route: entry.route,
  };
}
