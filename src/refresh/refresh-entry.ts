// One background refresh: a conditional request for a stored entry through the fill layer, so it is
// coalesced with clients' revalidations of the key, judged by the same RFC rules (RFC 9111 §3, §4.3.4)
// and stored through the same store gate as a client's revalidation.
import type { CacheEntry } from '../cache/entry.js';
import { variantWithKey, type TieredCache } from '../store/tiered-cache.js';
import { headersFromRaw } from '../cache/policy/header-lookup.js';
import type { CachingRoute } from '../fill/origin-opening.js';
import type { OriginRequest } from '../fill/origin-fetch.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { FillLayer } from '../fill/fill-layer.js';
import type { StoreOutcome } from '../fill/fill.js';
import { UnmatchedNotModifiedError } from '../fill/origin-opening.js';

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
 * - `superseded`: while the refresh was in flight the entry was purged, banned or soft-purged (the
 *   store gate), or removed, so the answer is dropped rather than undo that.
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
  fills: FillLayer;
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

/** A store step's outcome as a refresh reports it. */
function stored(result: '304' | '200', entry: CacheEntry, outcome: StoreOutcome): RefreshOutcome {
  switch (outcome) {
    case 'stored':
      return { result, entry };
    case 'invalidated':
    case 'superseded':
      return failed('superseded');
    case 'not_stored':
      return failed('not_storable');
    case 'implausible_length':
      return failed('body_incomplete');
    default:
      return failed('store_refused');
  }
}

export async function refreshEntry(
  deps: RefreshEntryDeps,
  entry: CacheEntry,
  request: OriginRequest,
  route: CachingRoute,
  signal: AbortSignal,
): Promise<RefreshOutcome> {
  const requestHeaders = headersFromRaw(request.rawHeaders);
  const fill = deps.fills.fromOrigin({ key: entry.key, request, requestHeaders, route, revalidating: entry, renewOnly: true, signal }, true);
  const head = await fill.head;
  if (head.kind === 'failed') {
    if (signal.aborted) return failed('aborted');
    if (head.error instanceof UnmatchedNotModifiedError) return failed('unmatched_304');
    return failed(head.error instanceof UpstreamError ? head.error.code : 'upstream_error');
  }
  if (head.kind === 'not_modified') return stored('304', head.entry, head.stored);
  const result = await fill.result;
  switch (result.state) {
    case 'complete':
      return stored('200', result.entry, result.stored);
    case 'pass':
      if (result.reason === 'too_large') return failed('too_large');
      return failed(head.status === 200 ? 'not_storable' : 'unexpected_status');
    case 'failed':
      return failed(signal.aborted ? 'aborted' : 'body_incomplete');
  }
}
