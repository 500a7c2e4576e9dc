// Surrogate keys (spec §1.2): the tags a ban by `surrogate_key` matches.

import type { HeaderLookup } from './header-lookup.js';

/** At most this many tags are kept per response, so one response cannot grow the tag index without bound. */
export const MAX_TAGS = 256;
/** A longer tag is dropped, not truncated, so two tags never collide by truncation (Fastly's and Cloudflare's bound). */
export const MAX_TAG_LENGTH = 1024;

/** The tag headers in precedence order with their separator (spec §1.2; the order is svc's choice, §2.5). */
const TAG_FIELDS: readonly (readonly [name: string, separator: 'space' | 'comma'])[] = [
  ['surrogate-key', 'space'],
  ['cache-tag', 'comma'],
  ['x-cache-tags', 'space'],
];

function isSeparator(code: number, separator: 'space' | 'comma'): boolean {
  // Several field lines reach us combined with ", ", so a comma also ends a space-separated tag.
  if (code === 44) return true;
  return separator === 'space' && (code === 32 || code === 9);
}

function splitTags(value: string, separator: 'space' | 'comma'): string[] {
  const tags: string[] = [];
  const seen = new Set<string>();
  let start = 0;
  for (let i = 0; i <= value.length && tags.length < MAX_TAGS; i++) {
    if (i < value.length && !isSeparator(value.charCodeAt(i), separator)) continue;
    const tag = value.slice(start, i).trim();
    start = i + 1;
    if (tag.length === 0 || tag.length > MAX_TAG_LENGTH || seen.has(tag)) continue;
    seen.add(tag);
    tags.push(tag);
  }
  return tags;
}

/**
 * The response's tags: from the first of Surrogate-Key (space-separated), Cache-Tag (comma-separated)
 * and X-Cache-Tags (space-separated) that yields at least one tag. Tags are trimmed, empty and
 * over-long ones dropped, duplicates removed (first kept), at most MAX_TAGS kept; case is kept.
 */
export function surrogateKeys(headers: HeaderLookup): string[] {
  for (const [name, separator] of TAG_FIELDS) {
    const value = headers(name);
    if (value === undefined) continue;
    const tags = splitTags(value, separator);
    if (tags.length > 0) return tags;
  }
  return [];
}
