// Whether svc, a shared cache, may store a response (RFC 9111 §3, §3.5) and which fields it leaves out.

import { freshnessLifetime, isCappedError } from './freshness.js';
import type { HeaderLookup } from './header-lookup.js';
import { requestDirectives, type RequestDirectives } from './request-directives.js';
import type { RouteCacheOptions } from './route-cache-options.js';
import { staleWindows } from './stale-windows.js';
import { HEURISTICALLY_CACHEABLE_STATUSES, UNDERSTOOD_STATUSES } from './status-codes.js';
import { effectiveCacheControl, type EffectiveCacheControl } from './targeted-cache-control.js';
import { varyNames } from './vary.js';

export interface StoreRequest {
  /** The method of the request sent to the origin (svc fetches GET for a HEAD client). */
  readonly method: string;
  readonly headers: HeaderLookup;
  /** The request's directives when already parsed; read from `headers` if not. */
  readonly directives?: RequestDirectives | undefined;
}

export interface StoreResponse {
  readonly status: number;
  readonly headers: HeaderLookup;
  /** The effective cache control when already computed; read from `headers` if not. */
  readonly control?: EffectiveCacheControl | undefined;
  /** When the response arrived (ms since the epoch): the Date fallback for Expires. */
  readonly responseTimeMs: number;
}

/** Why a response is or is not stored; stable strings for logs, debug output and metrics. */
export type StoreReason =
  | 'cacheable'
  | 'ttl_override'
  | 'method'
  | 'status_not_final'
  | 'partial_content'
  | 'not_modified'
  | 'request_no_store'
  | 'vary_star'
  | 'override_status'
  | 'must_understand'
  | 'no_store'
  | 'private'
  | 'authorization'
  | 'set_cookie'
  | 'not_cacheable'
  | 'not_reusable';

export interface StoreDecision {
  readonly store: boolean;
  readonly reason: StoreReason;
  /** Lower-case names of fields to leave out of the stored response (`private="…"`, `no-cache="…"`). */
  readonly omitFields: readonly string[];
}

const NONE: readonly string[] = [];

function refuse(reason: StoreReason): StoreDecision {
  return { store: false, reason, omitFields: NONE };
}

function omittedFields(control: EffectiveCacheControl): readonly string[] {
  const { privateFields, noCacheFields } = control.directives;
  if (noCacheFields.length === 0) return privateFields;
  if (privateFields.length === 0) return noCacheFields;
  return [...new Set([...privateFields, ...noCacheFields])];
}

/**
 * RFC 9111 §3 for a shared cache, with these svc decisions:
 * - only GET responses are stored; HEAD requests are answered from a stored GET response, and a HEAD
 *   response is never stored (it has no body to answer a GET with);
 * - 206 is not stored (svc answers ranges from complete 200s) and 304 only updates (§4.3.4);
 * - Set-Cookie: a response that sets a cookie is not stored unless the origin names Set-Cookie in
 *   `private="…"` or `no-cache="…"`, in which case it is stored without it (Varnish's default; a
 *   cookie replayed to every client leaks sessions);
 * - a status RFC 9110 §15.1 does not call heuristically cacheable is stored only with explicit
 *   freshness (`public` alone is not enough), and a 4xx/5xx among them lives at most the route's
 *   `max_error_ttl` (isCappedError), not at all when that is 0;
 * - a response with zero lifetime (or unqualified no-cache) is stored only if it can be reused:
 *   it has a validator, or a stale-while-revalidate / stale-if-error window;
 * - a route's ttl_override stores whatever the origin's Cache-Control, Surrogate-Control,
 *   CDN-Cache-Control and Expires say (no-store, private, no-cache, max-age=0 included), but only for
 *   heuristically cacheable statuses (no 5xx other than 501 is cached for the override's lifetime),
 *   and it never lifts the rules that are not about cache directives: request no-store, Vary: *,
 *   Authorization (§3.5), Set-Cookie, and leaving out `private="…"` fields.
 */
export function canStore(request: StoreRequest, response: StoreResponse, route: RouteCacheOptions = {}): StoreDecision {
  if (request.method !== 'GET') return refuse('method');
  const { status, headers } = response;
  if (status < 200) return refuse('status_not_final');
  if (status === 206) return refuse('partial_content');
  if (status === 304) return refuse('not_modified');
  if ((request.directives ?? requestDirectives(request.headers)).noStore) return refuse('request_no_store');
  if (varyNames(headers).star) return refuse('vary_star');

  const control = response.control ?? effectiveCacheControl(headers);
  const directives = control.directives;
  const override = route.ttlOverrideMs !== undefined;
  if (override) {
    if (!HEURISTICALLY_CACHEABLE_STATUSES.has(status)) return refuse('override_status');
  } else {
    // §5.2.2.3: a cache that understands the status code ignores no-store under must-understand.
    if (directives.mustUnderstand) {
      if (!UNDERSTOOD_STATUSES.has(status)) return refuse('must_understand');
    } else if (directives.noStore) {
      return refuse('no_store');
    }
    if (directives.private) return refuse('private');
  }
  // §3.5: applies under ttl_override too, since a shared answer to an authenticated request leaks it.
  if (
    request.headers('authorization') !== undefined &&
    !(directives.public || directives.mustRevalidate || directives.sMaxAgeMs !== undefined)
  ) {
    return refuse('authorization');
  }
  const omitFields = omittedFields(control);
  if (headers('set-cookie') !== undefined && !omitFields.includes('set-cookie')) return refuse('set_cookie');
  if (override) return { store: true, reason: 'ttl_override', omitFields };

  const freshness = freshnessLifetime(status, headers, control, response.responseTimeMs, route);
  // Other statuses need explicit freshness (`public` alone is not enough), and errors a cap above 0.
  if (freshness.source === 'none' && !HEURISTICALLY_CACHEABLE_STATUSES.has(status)) return refuse('not_cacheable');
  if (route.maxErrorTtlMs === 0 && isCappedError(status)) return refuse('not_cacheable');
  if (freshness.lifetimeMs === 0 || directives.noCache) {
    const hasValidator = headers('etag') !== undefined || headers('last-modified') !== undefined;
    const windows = staleWindows(control, route);
    if (!hasValidator && windows.staleWhileRevalidateMs === 0 && windows.staleIfErrorMs === 0) {
      return refuse('not_reusable');
    }
  }
  return { store: true, reason: 'cacheable', omitFields };
}
