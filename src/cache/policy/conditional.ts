// Client conditional requests answered from a stored response (RFC 9111 §4.3.2, RFC 9110 §13).

import type { CacheEntry } from '../entry.js';
import { entityTagListMatches, isWildcard } from './entity-tag.js';
import { firstRawValue, type HeaderLookup } from './header-lookup.js';
import { parseHttpDate } from '../../http/http-date.js';

/**
 * - `not_modified`: answer 304 from the stored response (with notModifiedFields);
 * - `forward`: the request carries preconditions meant for the origin: send it there and relay the answer;
 * - `proceed`: serve the stored response as usual (Range and If-Range are evaluated separately).
 */
export type ConditionalOutcome = 'not_modified' | 'forward' | 'proceed';

export type ConditionalEntry = Pick<CacheEntry, 'status' | 'etag' | 'lastModified' | 'headers'>;

/**
 * Evaluates a GET or HEAD request's preconditions against a stored response svc is about to serve
 * (fresh, allowed stale, or just revalidated), as RFC 9111 §4.3.2 and RFC 9110 §13.2.2 say:
 * - If-Match and If-Unmodified-Since are not applicable to a cache, which must not evaluate them
 *   (§4.3.2): svc forwards such a request to the origin instead of answering it;
 * - If-None-Match (weak comparison; `*` matches) → 304 when it matches; when present,
 *   If-Modified-Since is not looked at;
 * - otherwise If-Modified-Since → 304 when the stored Last-Modified (or, without one, the stored
 *   Date) is not later than it; an invalid date is ignored.
 * Preconditions are only evaluated against a stored 2xx (RFC 9110 §13.2.1).
 */
export function evaluateConditional(request: HeaderLookup, entry: ConditionalEntry): ConditionalOutcome {
  if (request('if-match') !== undefined || request('if-unmodified-since') !== undefined) return 'forward';
  if (entry.status < 200 || entry.status > 299) return 'proceed';
  const ifNoneMatch = request('if-none-match');
  if (ifNoneMatch !== undefined) {
    return isWildcard(ifNoneMatch) || entityTagListMatches(ifNoneMatch, entry.etag, false) ? 'not_modified' : 'proceed';
  }
  const ifModifiedSinceMs = parseHttpDate(request('if-modified-since'));
  if (ifModifiedSinceMs !== undefined) {
    const referenceMs = parseHttpDate(entry.lastModified) ?? parseHttpDate(firstRawValue(entry.headers, 'date'));
    if (referenceMs !== undefined && referenceMs <= ifModifiedSinceMs) return 'not_modified';
  }
  return 'proceed';
}

/**
 * Fields a 304 must carry when the 200 would have (RFC 9110 §15.4.5), plus the targeted cache-control
 * field a CDN in front of svc reads like Cache-Control.
 */
const NOT_MODIFIED_FIELDS: ReadonlySet<string> = new Set([
  'cache-control',
  'cdn-cache-control',
  'content-location',
  'date',
  'etag',
  'expires',
  'vary',
]);

/**
 * The fields of a stored response that a 304 generated from it carries, flat and with names as stored.
 * Last-Modified is added when there is no ETag, since it then guides the client's cache update.
 */
export function notModifiedFields(entryHeaders: readonly string[]): string[] {
  const fields: string[] = [];
  let lastModified: string[] | undefined;
  let hasEtag = false;
  for (let i = 0; i + 1 < entryHeaders.length; i += 2) {
    const name = entryHeaders[i] as string;
    const lower = name.toLowerCase();
    if (NOT_MODIFIED_FIELDS.has(lower)) {
      fields.push(name, entryHeaders[i + 1] as string);
      if (lower === 'etag') hasEtag = true;
    } else if (lower === 'last-modified') {
      lastModified ??= [];
      lastModified.push(name, entryHeaders[i + 1] as string);
    }
  }
  if (!hasEtag && lastModified !== undefined) fields.push(...lastModified);
  return fields;
}
