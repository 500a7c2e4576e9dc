// How a fill opens on the origin: the one place where an origin answer is judged (RFC 9111 §3), turned
// into the entry it may become, or, for a revalidation, merged into the stored entry it confirms
// (§4.3.4). Client misses, client revalidations, stale-while-revalidate and background refresh all open
// their fills here.
import type { CacheEntry } from '../cache/entry.js';
import { headersFromRaw, type HeaderLookup } from '../cache/policy/header-lookup.js';
import { mergeNotModified, selectNotModifiedTargets } from '../cache/policy/not-modified.js';
import { forwardedFields } from '../cache/policy/stored-fields.js';
import type { RequestDirectives } from '../cache/policy/request-directives.js';
import { canStore, type StoreReason } from '../cache/policy/storability.js';
import { surrogateKeys } from '../cache/policy/surrogate-keys.js';
import { varyNames, variantKey } from '../cache/policy/vary.js';
import { buildEntry, entryFromNotModified } from './build-entry.js';
import type { RouteCacheOptions } from '../cache/policy/route-cache-options.js';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import { fetchFromOrigin, type OriginAnswer, type OriginFetch, type OriginRequest } from './origin-fetch.js';
import type { AnswerHead, Fill, FillOpening } from './fill.js';
import type { HitForPassMarkers } from './hit-for-pass.js';

/** A route whose GET and HEAD requests the cache answers: its label, its origin pool and its policy. */
export interface CachingRoute {
  label: string;
  pool: UpstreamPool;
  policy: RouteCacheOptions;
}

/** What a fill asks of the origin. */
export interface OriginFillRequest {
  key: string;
  request: OriginRequest;
  requestHeaders: HeaderLookup;
  directives?: RequestDirectives | undefined;
  route: CachingRoute;
  /** The stored entry being revalidated: its validators go with the request, and a 304 updates it. */
  revalidating?: CacheEntry | undefined;
  /**
   * A background refresh: only a 200, or a 304 that matches the entry, renews it. Another status is
   * passed on but not stored, and a 304 that matches nothing fails the fill (UnmatchedNotModifiedError)
   * rather than asking again.
   */
  renewOnly?: boolean;
  /**
   * false: a storable answer is shared with the fill's readers but never stored (a node answering for
   * a key another node owns).
   */
  store?: boolean;
  signal?: AbortSignal | undefined;
  /** Passes the origin's 1xx answers on to the client whose request opens the fill. */
  onInformational?: OriginFetch['onInformational'];
}

/** A 304 whose validators describe none of the stored responses (RFC 9111 §4.3.4). */
export class UnmatchedNotModifiedError extends Error {
  override readonly name = 'UnmatchedNotModifiedError';
  readonly code = 'unmatched_304';
}

export interface OriginOpeningDeps {
  now: () => number;
  /** Drops the entry a 304 made unstorable (RFC 9111 §4.3.4: served once, then gone). */
  deleteEntry: (entry: CacheEntry) => void;
  /** Whether `entry` is still the stored one: a 304 updates what is stored, never what was removed. */
  isStored: (entry: CacheEntry) => boolean;
  markers: HitForPassMarkers;
}

/**
 * Refusals that come from the request, not the answer: another request for the URL may well get a
 * storable answer, so they leave no hit-for-pass marker.
 */
const REQUEST_REASONS: ReadonlySet<StoreReason> = new Set(['method', 'request_no_store', 'authorization']);

/** Statuses whose answers carry no body (RFC 9110 §6.4.1). */
function hasNoBody(status: number): boolean {
  return status === 204 || status === 304 || status < 200;
}

/** A Content-Length of plain digits, or undefined. */
export function announcedLength(value: string | string[] | undefined): number | undefined {
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/** Neither a length nor chunked framing: the body ends when the origin closes the connection. */
function isCloseDelimited(status: number, headers: OriginAnswer['headers']): boolean {
  if (hasNoBody(status) || headers['content-length'] !== undefined) return false;
  const coding = headers['transfer-encoding'];
  const codings = Array.isArray(coding) ? coding.join(',') : (coding ?? '');
  return !/chunked/i.test(codings);
}

/** The opening function of a fill that asks the origin. */
export function openOnOrigin(deps: OriginOpeningDeps, ask: OriginFillRequest): (fill: Fill) => Promise<FillOpening> {
  return async (fill) => {
    const { route, revalidating } = ask;
    const fetch = (validators: CacheEntry | undefined): Promise<OriginAnswer> =>
      fetchFromOrigin(
        route.pool,
        ask.request,
        {
          method: 'GET',
          forCache: true,
          ...(validators ? { validators } : {}),
          ...(ask.signal ? { signal: ask.signal } : {}),
          onInformational: ask.onInformational,
        },
        deps.now,
      );
    let answer = await fetch(revalidating);
    if (revalidating && answer.statusCode === 304) {
      answer.body.resume();
      if (selectNotModifiedTargets(headersFromRaw(answer.fields), [revalidating]).length > 0) {
        const updated = entryFromNotModified(revalidating, answer.fields, ask.requestHeaders, answer, route.policy);
        const forwarded = forwardedFields(mergeNotModified(revalidating.headers, answer.fields));
        if (!updated) {
          deps.deleteEntry(revalidating);
          return { kind: 'not_modified', entry: revalidating, stored: 'not_stored', forwardedFields: forwarded };
        }
        const stored = deps.isStored(revalidating) ? fill.store(updated) : 'superseded';
        return { kind: 'not_modified', entry: updated, stored, forwardedFields: forwarded };
      }
      if (ask.renewOnly) throw new UnmatchedNotModifiedError('the 304 describes none of the stored responses');
      // The 304 does not describe what svc holds (RFC 9111 §4.3.4): ask again without validators.
      answer = await fetch(undefined);
    }
    return openAnswer(deps, ask, answer);
  };
}

function openAnswer(deps: OriginOpeningDeps, ask: OriginFillRequest, answer: OriginAnswer): FillOpening {
  const { key, requestHeaders, route } = ask;
  const responseHeaders = headersFromRaw(answer.fields);
  const judged = canStore(
    { method: 'GET', headers: requestHeaders, directives: ask.directives },
    { status: answer.statusCode, headers: responseHeaders, responseTimeMs: answer.responseTimeMs },
    route.policy,
  );
  const verdict = ask.renewOnly && answer.statusCode !== 200 ? { ...judged, store: false } : judged;
  if (verdict.store) deps.markers.clear(key);
  else if (!ask.renewOnly && !REQUEST_REASONS.has(verdict.reason)) deps.markers.mark(key, deps.now());
  const draft = verdict.store
    ? buildEntry({ key, requestHeaders, answer, route: route.label, policy: route.policy, omitFields: verdict.omitFields })
    : undefined;
  const vary = varyNames(responseHeaders);
  const head: AnswerHead = draft
    ? {
        status: answer.statusCode,
        fields: draft.clientFields,
        sharedFields: draft.described.headers,
        shareable: true,
        varyNames: draft.described.varyNames,
        variantKey: draft.described.variantKey,
        varyStar: false,
        tags: draft.described.tags,
        etag: draft.described.etag,
        lastModified: draft.described.lastModified,
        correctedInitialAgeMs: draft.described.correctedInitialAgeMs,
        responseTimeMs: answer.responseTimeMs,
      }
    : {
        status: answer.statusCode,
        fields: answer.fields,
        shareable: false,
        varyNames: vary.names,
        variantKey: variantKey(vary.names, requestHeaders),
        varyStar: vary.star,
        tags: surrogateKeys(responseHeaders),
        etag: responseHeaders('etag'),
        lastModified: responseHeaders('last-modified'),
        correctedInitialAgeMs: 0,
        responseTimeMs: answer.responseTimeMs,
      };
  // A node answering for a key another node owns keeps no copy: counted a MISS, as a pass-through to
  // the origin for an owner that cannot answer is (docs/http-caching.md, "X-Cache and cache_result").
  if (ask.store === false) head.countedAs = ['MISS', 'origin'];
  const noBody = hasNoBody(answer.statusCode);
  return {
    kind: 'answer',
    head,
    body: answer.body,
    announcedBytes: noBody ? 0 : announcedLength(answer.headers['content-length']),
    closeDelimited: isCloseDelimited(answer.statusCode, answer.headers),
    complete: draft && ask.store !== false ? (body) => draft.complete(body) : undefined,
  };
}
