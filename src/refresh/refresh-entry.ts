// One background refresh: a conditional request for a stored entry, and what its answer does to the
// cache. The RFC work is the proxy's: the same origin fetch, the same 304 selection and merge
// (RFC 9111 §4.3.4), the same storability rules (§3) and entry builder as a client's revalidation.
import type { CacheEntry } from '../cache/entry.js';
import { variantWithKey, type TieredCache } from '../cache/tiered-cache.js';
import { headersFromRaw } from '../cache/policy/header-lookup.js';
import { selectNotModifiedTargets } from '../cache/policy/not-modified.js';
import { canStore } from '../cache/policy/storability.js';
import { buildEntry, entryFromNotModified } from '../proxy/build-entry.js';
import type { CachingRoute } from '../proxy/cache-flow.js';
import { fetchFromOrigin, type OriginAnswer, type OriginRequest } from '../proxy/origin-fetch.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { collectBody } from './collect-body.js';

/**
 * Why a refresh renewed nothing (the `error_type` label of svc_refresh_errors_total):
 * - `upstream_refused`, `upstream_timeout`, `upstream_error`: the origin request failed;
 * - `aborted`: svc stopped while the refresh was in flight;
 * - `unexpected_status`: the origin answered neither 200 nor 304;
 * - `unmatched_304`: a 304 whose validators do not describe the stored entry;
 * - `not_storable`: the answer may not be stored (RFC 9111 §3); after a 304 the entry is dropped;
 * - `too_large`: the new body is larger than `max_object_bytes`;
 * - `body_incomplete`: the new body ended early;
 * - `store_refused`: the hot tier refused the new entry (variant cap, larger than the tier);
 * - `superseded`: while the refresh was in flight the entry was purged, banned, soft-purged or
 *   replaced, so the answer is dropped rather than undo that.
 */
export type RefreshErrorType =
  | UpstreamError['code']
  | 'aborted'
  | 'unexpected_status'
  | 'unmatched_304'
  | 'not_storable'
  | 'too_large'
  | 'body_incomplete'
  | 'store_refused'
  | 'superseded';

export type RefreshOutcome =
  | { result: '304' | '200'; entry: CacheEntry }
  | { result: 'error'; errorType: RefreshErrorType };

export interface RefreshEntryDeps {
  cache: TieredCache;
  now: () => number;
  maxObjectBytes: number;
  /** The lazy ban check the proxy applies; an entry it hides is not refreshed back to life. */
  isInvalidated?: ((entry: CacheEntry) => boolean) | undefined;
}

/** The stored variant `(key, variantKey)` as a client would find it, or undefined. */
export function findStored(deps: Pick<RefreshEntryDeps, 'cache' | 'isInvalidated'>, key: string, variantKey: string): CacheEntry | undefined {
  const entry = deps.cache.lookup(key, variantWithKey, variantKey)?.entry;
  if (entry === undefined || deps.isInvalidated?.(entry)) return undefined;
  return entry;
}

function failed(errorType: RefreshErrorType): RefreshOutcome {
  return { result: 'error', errorType };
}

export async function refreshEntry(
  deps: RefreshEntryDeps,
  entry: CacheEntry,
  request: OriginRequest,
  route: CachingRoute,
  signal: AbortSignal,
): Promise<RefreshOutcome> {
  let answer: OriginAnswer;
  try {
    answer = await fetchFromOrigin(route.pool, request, { method: 'GET', forCache: true, validators: entry, signal }, deps.now);
  } catch (error) {
    if (signal.aborted) return failed('aborted');
    return failed(error instanceof UpstreamError ? error.code : 'upstream_error');
  }
  const requestHeaders = headersFromRaw(request.rawHeaders);
  const unchanged = (): boolean => {
    const current = findStored(deps, entry.key, entry.variantKey);
    return current !== undefined && current.responseTimeMs === entry.responseTimeMs && !current.forcedStale;
  };

  if (answer.statusCode === 304) {
    answer.body.resume();
    if (selectNotModifiedTargets(headersFromRaw(answer.fields), [entry]).length === 0) return failed('unmatched_304');
    if (!unchanged()) return failed('superseded');
    const updated = entryFromNotModified(entry, answer.fields, requestHeaders, answer, route.policy);
    if (!updated) {
      // The 304 says the response may no longer be stored: what is held goes, as on the request path.
      deps.cache.delete(entry.key, entry.variantKey);
      return failed('not_storable');
    }
    return deps.cache.store(updated) === 'stored' ? { result: '304', entry: updated } : failed('store_refused');
  }
  if (answer.statusCode !== 200) {
    answer.body.resume();
    return failed('unexpected_status');
  }
  const verdict = canStore(
    { method: 'GET', headers: requestHeaders },
    { status: answer.statusCode, headers: headersFromRaw(answer.fields), responseTimeMs: answer.responseTimeMs },
    route.policy,
  );
  if (!verdict.store) {
    answer.body.resume();
    return failed('not_storable');
  }
  const collected = await collectBody(answer.body, deps.maxObjectBytes);
  if ('failure' in collected) return failed(signal.aborted ? 'aborted' : collected.failure);
  if (!unchanged()) return failed('superseded');
  const draft = buildEntry({ key: entry.key, requestHeaders, answer, route: route.label, policy: route.policy, omitFields: verdict.omitFields });
  const stored = draft.complete(collected.body);
  return deps.cache.store(stored) === 'stored' ? { result: '200', entry: stored } : failed('store_refused');
}
