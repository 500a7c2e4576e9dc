// Freshening stored responses with a 304 (RFC 9111 §3.2, §4.3.4).

import type { CacheEntry } from '../entry.js';
import { isStrongEntityTag } from './entity-tag.js';
import type { HeaderLookup } from './header-lookup.js';
import { parseHttpDate } from '../../http/http-date.js';
import { connectionOptions, HOP_BY_HOP_FIELDS } from '../../http/hop-by-hop.js';

/**
 * Fields a 304 never replaces in the stored response (§3.2): Content-Length and the other fields the
 * stored body's framing depends on, and the hop-by-hop fields that are never stored (§3.1,
 * RFC 9110 §7.6.1). Fields the 304's Connection header lists are left out as well.
 */
const NEVER_UPDATED: ReadonlySet<string> = new Set([
  'content-length',
  'content-encoding',
  'content-range',
  'proxy-authentication-info',
  ...HOP_BY_HOP_FIELDS,
]);

function connectionOptionsOf(fields: readonly string[]): Set<string> | undefined {
  const lines: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if ((fields[i] as string).toLowerCase() === 'connection') lines.push(fields[i + 1] as string);
  }
  return lines.length === 0 ? undefined : connectionOptions(lines);
}

/**
 * The stored header list updated with a 304's fields: every field the 304 carries replaces all stored
 * lines of that name, except the fields listed above and `omitFields` (the lower-case names the
 * response's `private="…"` / `no-cache="…"` keep out of storage). Stored fields the 304 does not carry
 * keep their place; the 304's fields follow them in the 304's order. Both lists are flat
 * `[name, value, …]`; the result is a new list.
 */
export function mergeNotModified(
  storedHeaders: readonly string[],
  notModifiedHeaders: readonly string[],
  omitFields: readonly string[] = [],
): string[] {
  const excluded = connectionOptionsOf(notModifiedHeaders);
  const replacements: string[] = [];
  const replaced = new Set<string>();
  for (let i = 0; i + 1 < notModifiedHeaders.length; i += 2) {
    const name = notModifiedHeaders[i] as string;
    const lower = name.toLowerCase();
    if (NEVER_UPDATED.has(lower) || excluded?.has(lower) === true || omitFields.includes(lower)) continue;
    replaced.add(lower);
    replacements.push(name, notModifiedHeaders[i + 1] as string);
  }
  const merged: string[] = [];
  for (let i = 0; i + 1 < storedHeaders.length; i += 2) {
    const name = storedHeaders[i] as string;
    if (!replaced.has(name.toLowerCase())) merged.push(name, storedHeaders[i + 1] as string);
  }
  for (const field of replacements) merged.push(field);
  return merged;
}

export type UpdateCandidate = Pick<CacheEntry, 'etag' | 'lastModified'>;

/**
 * Which stored responses (given most recently stored first, as `CacheStore.variants` returns them) a
 * 304 freshens, by index (§4.3.4):
 * - a strong ETag in the 304 selects every stored response with the same strong ETag;
 * - otherwise a Last-Modified in the 304 selects every stored response with the same Last-Modified
 *   when it is strong (at least one second before the 304's Date, RFC 9110 §8.8.2.2);
 * - a weak ETag or a weak Last-Modified selects only the most recent stored response that matches;
 * - a 304 without validators selects the only stored response.
 * An empty result means nothing may be updated: the caller then repeats the request unconditionally.
 *
 * `stored` holds the responses whose validators the conditional request carried. svc revalidates one
 * stored response at a time with that response's own validators, so a 304 without any validator can
 * only be the origin saying that this response is still current. §4.3.4 selects the only stored
 * response in that case when it "also lacks a validator"; that condition tells apart responses a
 * cache holds but did not ask about, and svc never holds one it did not ask about. Refusing the 304
 * would cost a second, unconditional request on every revalidation against an origin that leaves its
 * validators out of 304s (RFC 9110 §15.4.5 says it must not), and a stale-while-revalidate entry of
 * such an origin would never become fresh again.
 */
export function selectNotModifiedTargets(notModified: HeaderLookup, stored: readonly UpdateCandidate[]): number[] {
  const etag = notModified('etag')?.trim();
  const lastModified = notModified('last-modified')?.trim();
  const selected: number[] = [];
  if (etag !== undefined) {
    const strong = isStrongEntityTag(etag);
    for (let i = 0; i < stored.length; i++) {
      if (stored[i]?.etag?.trim() !== etag) continue;
      selected.push(i);
      if (!strong) break;
    }
    return selected;
  }
  if (lastModified !== undefined) {
    const lastModifiedMs = parseHttpDate(lastModified);
    const dateMs = parseHttpDate(notModified('date'));
    const strong = lastModifiedMs !== undefined && dateMs !== undefined && dateMs - lastModifiedMs >= 1000;
    for (let i = 0; i < stored.length; i++) {
      if (stored[i]?.lastModified?.trim() !== lastModified) continue;
      selected.push(i);
      if (!strong) break;
    }
    return selected;
  }
  if (stored.length === 1) selected.push(0);
  return selected;
}
