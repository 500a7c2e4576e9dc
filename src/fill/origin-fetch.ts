// Sending a client's request on to the origin through the route's pool.
import type { UpstreamPool, UpstreamRequest, UpstreamResponse } from '../upstream/upstream-pool.js';
import { originRequestHeaders, responseFieldsFromOrigin, withVia, type Forwarding } from './forward-headers.js';
import type { RequestTrace } from '../observe/tracing/request-trace.js';

/**
 * Request fields that make the origin answer something other than the whole current representation.
 * svc drops them when it fetches to fill the cache and answers them itself from the stored copy.
 */
const PARTIAL_OR_CONDITIONAL = ['range', 'if-range', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];

/** What svc forwards of a client request; a background refresh builds one with no client. */
export interface OriginRequest {
  /** Origin-form path and query, as the client sent them. */
  path: string;
  /** The client's raw header list (name, value, name, value…). */
  rawHeaders: readonly string[];
  /** What svc tells the origin about the request (Host, X-Forwarded-*, stripped fields). */
  forwarding: Forwarding;
  /** Whose budget of in-flight origin requests this one counts against; '' for svc's own. */
  clientAddress: string;
  /** The client request's trace, when it has one (a background refresh has none). */
  trace?: RequestTrace | undefined;
}

export interface OriginFetch {
  /** `GET` to fill the cache for a HEAD, otherwise the client's method. */
  method: string;
  /** Drop the client's Range and conditional fields (a fetch that fills the cache). */
  forCache: boolean;
  /** Validators of the stored entry, for a revalidation. */
  validators?: { etag?: string | undefined; lastModified?: string | undefined };
  signal?: AbortSignal;
  /** Passes the origin's 1xx answers on to the client (relayInformational). */
  onInformational?: UpstreamRequest['onInformational'];
}

export interface OriginAnswer extends UpstreamResponse {
  /** Client-facing response fields: hop-by-hop ones removed, svc's Via added. */
  fields: string[];
  requestTimeMs: number;
  responseTimeMs: number;
}

export async function fetchFromOrigin(
  pool: UpstreamPool,
  request: OriginRequest,
  fetch: OriginFetch,
  now: () => number,
): Promise<OriginAnswer> {
  const headers = originRequestHeaders(request.rawHeaders, request.forwarding);
  if (fetch.forCache) for (const name of PARTIAL_OR_CONDITIONAL) delete headers[name];
  if (fetch.validators?.etag) headers['if-none-match'] = fetch.validators.etag;
  if (fetch.validators?.lastModified) headers['if-modified-since'] = fetch.validators.lastModified;
  const requestTimeMs = now();
  const answer = await pool.request({
    method: fetch.method,
    path: request.path,
    headers,
    clientAddress: request.clientAddress,
    trace: request.trace,
    ...(fetch.signal ? { signal: fetch.signal } : {}),
    onInformational: fetch.onInformational,
  });
  return { ...answer, fields: withVia(responseFieldsFromOrigin(answer.headers)), requestTimeMs, responseTimeMs: now() };
}
