// Targeted cache control (RFC 9213): which field's directives govern svc's own storage and
// freshness decisions, and which surrogate-only fields svc keeps from clients.

import { parseCacheControl, type CacheControlDirectives } from './cache-control.js';
import type { HeaderLookup } from './header-lookup.js';
import { responseDirectives, type ResponseDirectives } from './response-directives.js';
import { parseTargetedDirectives } from './targeted-directives.js';

/** The field whose directives svc applies; `cache-control` also when the response has none. */
export type CacheControlSource = 'cdn-cache-control' | 'surrogate-control' | 'cache-control';

export interface EffectiveCacheControl {
  readonly directives: ResponseDirectives;
  readonly source: CacheControlSource;
}

/**
 * Response fields svc consumes and removes before a response reaches a client:
 * - `Surrogate-Control`: addressed to surrogates (W3C Edge Architecture 1.0), which remove it, as
 *   Fastly and Varnish setups do;
 * - `Surrogate-Key` and `X-Cache-Tags`: tags for svc's own bans, stripped as Fastly does with
 *   Surrogate-Key and Varnish setups do with X-Cache-Tags.
 * Left to reach clients on purpose: `CDN-Cache-Control`, which RFC 9213 §3 addresses to every CDN in
 * the chain, and `Cache-Tag`, which a CDN in front of svc (spec §6.2: purge by tags) reads itself and
 * strips before its own clients.
 */
export const SURROGATE_ONLY_FIELDS: ReadonlySet<string> = new Set(['surrogate-control', 'surrogate-key', 'x-cache-tags']);

function surrogateControl(value: string | undefined): CacheControlDirectives | undefined {
  if (value === undefined) return undefined;
  const parsed = parseCacheControl(value);
  if (parsed.size === 0) return undefined;
  // Edge Architecture 1.0 writes `max-age=freshness+extension`: the extension is how long the
  // surrogate may serve the object stale when the origin is unreachable, i.e. stale-if-error.
  const maxAge = parsed.get('max-age');
  const plus = maxAge == null ? -1 : maxAge.indexOf('+');
  if (maxAge == null || plus < 0) return parsed;
  const adjusted = new Map(parsed);
  adjusted.set('max-age', maxAge.slice(0, plus).trim());
  if (!adjusted.has('stale-if-error')) adjusted.set('stale-if-error', maxAge.slice(plus + 1).trim());
  return adjusted;
}

/**
 * RFC 9213 §2.2: the first targeted field on svc's target list with a valid, non-empty value
 * governs, and then Cache-Control (and Expires, see freshness) are ignored for svc's own decisions.
 * svc's target list, in order: `CDN-Cache-Control` (a Structured Dictionary; an invalid one is
 * ignored as a whole), then `Surrogate-Control` (Cache-Control syntax), then `Cache-Control`.
 */
export function effectiveCacheControl(headers: HeaderLookup): EffectiveCacheControl {
  const cdn = headers('cdn-cache-control');
  if (cdn !== undefined) {
    const parsed = parseTargetedDirectives(cdn);
    // A valid, non-empty field governs even when none of its members is usable (RFC 9213 §3.1's
    // `CDN-Cache-Control: none`), so emptiness is judged on the text, not on the parsed map.
    if (parsed !== undefined && cdn.trim().length > 0) {
      return { directives: responseDirectives(parsed), source: 'cdn-cache-control' };
    }
  }
  const surrogate = surrogateControl(headers('surrogate-control'));
  if (surrogate !== undefined) return { directives: responseDirectives(surrogate), source: 'surrogate-control' };
  return { directives: responseDirectives(parseCacheControl(headers('cache-control'))), source: 'cache-control' };
}
