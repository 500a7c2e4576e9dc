// Entity-tag comparison (RFC 9110 §8.8.3.2) against the lists carried by If-Match and If-None-Match.

const QUOTE = 34;
const COMMA = 44;

function isWeak(tag: string, start: number): boolean {
  return tag.charCodeAt(start) === 87 /* W */ && tag.charCodeAt(start + 1) === 47; /* / */
}

/** The opaque part of an entity tag (quotes included) and whether it was weak. */
function opaque(tag: string): { opaque: string; weak: boolean } {
  const trimmed = tag.trim();
  const weak = isWeak(trimmed, 0);
  return { opaque: weak ? trimmed.slice(2) : trimmed, weak };
}

/**
 * Whether `list` (an If-Match / If-None-Match value, not `*`) holds a tag matching `etag`.
 * Weak comparison (`strong` false) ignores the W/ prefix; strong comparison needs both tags strong.
 * Tags are read quote to quote, since an opaque tag may contain commas.
 */
export function entityTagListMatches(list: string, etag: string | undefined, strong: boolean): boolean {
  if (etag === undefined) return false;
  const stored = opaque(etag);
  if (strong && stored.weak) return false;
  const length = list.length;
  let i = 0;
  while (i < length) {
    let code = list.charCodeAt(i);
    while (i < length && (code === COMMA || code === 32 || code === 9)) code = list.charCodeAt(++i);
    if (i >= length) break;
    const start = i;
    const weak = isWeak(list, i);
    if (weak) i += 2;
    if (list.charCodeAt(i) === QUOTE) {
      const close = list.indexOf('"', i + 1);
      i = close < 0 ? length : close + 1;
    } else {
      while (i < length && list.charCodeAt(i) !== COMMA) i++;
    }
    const candidate = list.slice(weak ? start + 2 : start, i).trim();
    if (candidate === stored.opaque && !(strong && weak)) return true;
    while (i < length && list.charCodeAt(i) !== COMMA) i++;
  }
  return false;
}

/** Whether a field value is the `*` wildcard of If-Match / If-None-Match. */
export function isWildcard(value: string): boolean {
  return value.trim() === '*';
}

/** Whether an entity tag is strong (no W/ prefix), as If-Range requires (RFC 9110 §13.1.5). */
export function isStrongEntityTag(tag: string): boolean {
  return !opaque(tag).weak;
}

/** Strong comparison of two single entity tags. */
export function strongEntityTagsMatch(a: string, b: string | undefined): boolean {
  if (b === undefined) return false;
  const left = opaque(a);
  const right = opaque(b);
  return !left.weak && !right.weak && left.opaque === right.opaque;
}
