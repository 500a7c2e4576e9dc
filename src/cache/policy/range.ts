// Range requests answered from a stored complete 200 (RFC 9110 §14).

import type { CacheEntry } from '../entry.js';
import { isStrongEntityTag, strongEntityTagsMatch } from './entity-tag.js';
import { firstRawValue, type HeaderLookup } from './header-lookup.js';
import { parseHttpDate } from '../../http/http-date.js';

/** An inclusive byte range within the body. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export type RangeResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'satisfiable'; readonly ranges: readonly ByteRange[] }
  | { readonly kind: 'unsatisfiable' };

/**
 * More ranges than this in one request are ignored (a full 200 is sent): RFC 9110 §14.2 lets a server
 * ignore a range set that looks like a denial-of-service attempt.
 */
export const MAX_RANGES = 100;

const NONE: RangeResult = { kind: 'none' };
const UNSATISFIABLE: RangeResult = { kind: 'unsatisfiable' };

/** Digits only; more than 15 read as Infinity (beyond any body svc stores). NaN when not digits. */
function parsePosition(text: string): number {
  if (text.length === 0) return NaN;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return NaN;
  }
  return text.length > 15 ? Infinity : Number(text);
}

/**
 * Reads a Range value for a body of `bodyLength` bytes. `none` means "send the whole 200": no field, a
 * unit other than bytes, invalid syntax (including last-pos < first-pos) or more than MAX_RANGES ranges.
 * `unsatisfiable` (answer 416) means a valid set in which no range overlaps the body. Satisfiable ranges
 * are clipped to the body and kept in request order.
 */
export function parseRangeHeader(rangeHeader: string | undefined, bodyLength: number): RangeResult {
  if (rangeHeader === undefined) return NONE;
  const equals = rangeHeader.indexOf('=');
  if (equals < 0 || rangeHeader.slice(0, equals).trim().toLowerCase() !== 'bytes') return NONE;
  const ranges: ByteRange[] = [];
  let specs = 0;
  let start = equals + 1;
  for (let i = start; i <= rangeHeader.length; i++) {
    if (i < rangeHeader.length && rangeHeader.charCodeAt(i) !== 44) continue;
    const spec = rangeHeader.slice(start, i).trim();
    start = i + 1;
    if (spec.length === 0) continue;
    if (++specs > MAX_RANGES) return NONE;
    const dash = spec.indexOf('-');
    if (dash < 0) return NONE;
    const first = spec.slice(0, dash);
    const last = spec.slice(dash + 1);
    if (first.length === 0) {
      const suffixLength = parsePosition(last);
      if (Number.isNaN(suffixLength)) return NONE;
      if (suffixLength > 0 && bodyLength > 0) ranges.push({ start: Math.max(0, bodyLength - suffixLength), end: bodyLength - 1 });
      continue;
    }
    const firstPos = parsePosition(first);
    const lastPos = last.length === 0 ? Infinity : parsePosition(last);
    if (Number.isNaN(firstPos) || Number.isNaN(lastPos) || lastPos < firstPos) return NONE;
    if (firstPos < bodyLength) ranges.push({ start: firstPos, end: Math.min(lastPos, bodyLength - 1) });
  }
  if (specs === 0) return NONE;
  return ranges.length === 0 ? UNSATISFIABLE : { kind: 'satisfiable', ranges };
}

/** The Content-Range value of a 206 (`bytes 0-99/1000`) or of a 416 when `range` is undefined. */
export function contentRange(range: ByteRange | undefined, bodyLength: number): string {
  return range === undefined ? `bytes */${bodyLength}` : `bytes ${range.start}-${range.end}/${bodyLength}`;
}

/**
 * If-Range (RFC 9110 §13.1.5): whether the Range may be honoured. Absent: yes. An entity tag must
 * match the stored ETag by strong comparison. A date must equal the stored Last-Modified exactly, and
 * that Last-Modified must be strong: at least one second before the stored Date (§8.8.2.2). Otherwise
 * the whole 200 is sent.
 */
export function ifRangeAllowsPartial(
  ifRange: string | undefined,
  entry: Pick<CacheEntry, 'etag' | 'lastModified' | 'headers'>,
): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) {
    return isStrongEntityTag(value) && strongEntityTagsMatch(value, entry.etag);
  }
  const ifRangeMs = parseHttpDate(value);
  const lastModifiedMs = parseHttpDate(entry.lastModified);
  if (ifRangeMs === undefined || lastModifiedMs === undefined || ifRangeMs !== lastModifiedMs) return false;
  const dateMs = parseHttpDate(firstRawValue(entry.headers, 'date'));
  return dateMs !== undefined && dateMs - lastModifiedMs >= 1000;
}

/** What to send for a GET answered from a stored response. */
export type RangeToServe =
  | { readonly kind: 'none' }
  | { readonly kind: 'single'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const FULL: RangeToServe = { kind: 'none' };
const NOT_SATISFIABLE: RangeToServe = { kind: 'unsatisfiable' };

/**
 * The range to answer a GET with from a stored response: `single` → 206 with Content-Range,
 * `unsatisfiable` → 416 with `Content-Range: bytes *\/length`, `none` → the whole response. Only a stored
 * 200 is sliced; If-Range is evaluated first, so a failed If-Range always yields the whole 200
 * (RFC 9110 §13.1.5). Several satisfiable ranges also yield the whole 200: svc does not produce
 * multipart/byteranges, which §14.2 permits. Range applies to GET only (§14.2), so a HEAD must not
 * come here.
 */
export function parseRange(
  requestHeaders: HeaderLookup,
  entry: Pick<CacheEntry, 'status' | 'etag' | 'lastModified' | 'headers' | 'body'>,
): RangeToServe {
  const range = requestHeaders('range');
  if (range === undefined || entry.status !== 200) return FULL;
  if (!ifRangeAllowsPartial(requestHeaders('if-range'), entry)) return FULL;
  const result = parseRangeHeader(range, entry.body.length);
  if (result.kind === 'unsatisfiable') return NOT_SATISFIABLE;
  if (result.kind === 'none' || result.ranges.length !== 1) return FULL;
  const only = result.ranges[0] as ByteRange;
  return { kind: 'single', start: only.start, end: only.end };
}
