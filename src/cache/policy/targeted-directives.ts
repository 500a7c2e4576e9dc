// A targeted cache-control field such as CDN-Cache-Control (RFC 9213 §2.1) read into the same
// directive map as Cache-Control, so one interpretation serves both. The field is a Structured Field
// Dictionary, parsed by the `structured-headers` package (RFC 9651, which RFC 8941 grew into); this
// file only decides which members' values a cache may use. A field that fails to parse is reported
// as such (undefined), because RFC 9213 §2.1 says an invalid targeted field is ignored as a whole.

import { parseDictionary, Token, type BareItem, type Item } from 'structured-headers';
import type { CacheControlDirectives } from './cache-control.js';

/** Directives whose argument is delta-seconds (RFC 9111 §1.2.2): an Integer is the only value they take. */
const INTEGER_DIRECTIVES: ReadonlySet<string> = new Set(['max-age', 's-maxage', 'stale-while-revalidate', 'stale-if-error']);

/** Directives that only ever take `true`, and that only relax what a cache may do. */
const RELAXING_FLAGS: ReadonlySet<string> = new Set(['public', 'must-understand', 'immutable']);

/**
 * Directives that restrict what a cache may do: `true`, or (no-cache, private) a String listing field
 * names. Any other value still counts, as the unqualified directive.
 */
const RESTRICTIVE_DIRECTIVES: ReadonlySet<string> = new Set(['no-store', 'no-cache', 'private', 'must-revalidate', 'proxy-revalidate', 'no-transform']);
const FIELD_LIST_DIRECTIVES: ReadonlySet<string> = new Set(['no-cache', 'private']);

/**
 * An Integer that delta-seconds can be. The parser gives Integers and Decimals alike as numbers, so a
 * Decimal with no fraction (`60.0`) passes as the Integer of the same value (docs/decisions.md).
 */
function isDeltaSeconds(value: BareItem | Item[]): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * The directive argument a member's value gives (null: no argument), or undefined when the member is
 * dropped. RFC 9213 §2.1 infers each directive's type from its Cache-Control syntax and says values
 * of another type are not consumed:
 * - max-age, s-maxage, stale-while-revalidate, stale-if-error take a non-negative Integer; a String
 *   (`max-age="60"`), Token, fractional Decimal or Boolean drops the directive, so it can never
 *   lengthen a lifetime or open a stale window;
 * - public, must-understand and immutable take `true`; any other value drops them, since each lets a
 *   cache do more;
 * - no-store, no-cache, private, must-revalidate, proxy-revalidate and no-transform take `true`
 *   (no-cache and private also a String of field names); with any other value, `?0` included, they
 *   count unqualified: svc honours the most restrictive reading (RFC 9111 §4.2.1) rather than let a
 *   mistyped restriction lift itself;
 * - any other directive keeps Integer digits and String or Token text; it is ignored later anyway.
 * An Inner List (value: an array of Items) is none of these types.
 */
function toDirectiveArgument(key: string, value: BareItem | Item[]): string | null | undefined {
  if (INTEGER_DIRECTIVES.has(key)) return isDeltaSeconds(value) ? String(value) : undefined;
  if (RELAXING_FLAGS.has(key)) return value === true ? null : undefined;
  if (RESTRICTIVE_DIRECTIVES.has(key)) return FIELD_LIST_DIRECTIVES.has(key) && typeof value === 'string' ? value : null;
  if (value === true) return null;
  if (isDeltaSeconds(value) || typeof value === 'string') return String(value);
  if (value instanceof Token) return value.toString();
  return undefined;
}

/**
 * Parses a targeted field into directives, each value checked against its directive's type
 * (toDirectiveArgument). Parameters are ignored. A repeated key keeps its last value (RFC 9651
 * §4.2.2). Returns undefined when the field is not a valid Dictionary.
 */
export function parseTargetedDirectives(input: string): CacheControlDirectives | undefined {
  let dictionary: ReturnType<typeof parseDictionary>;
  try {
    dictionary = parseDictionary(input);
  } catch {
    // Whatever the parser throws on, the field is not one it can read: ignored as a whole.
    return undefined;
  }
  const directives = new Map<string, string | null>();
  for (const [key, [value]] of dictionary) {
    const argument = toDirectiveArgument(key, value);
    if (argument !== undefined) directives.set(key, argument);
  }
  return directives;
}
