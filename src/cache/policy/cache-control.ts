// Cache-Control field parsing (RFC 9111 §5.2). One left-to-right scan, no regular expressions and
// no intermediate arrays, because it runs for every response the proxy receives.

/**
 * Directive name (lower-case) → argument with quoted-string quoting removed, or null when the
 * directive has no argument.
 */
export type CacheControlDirectives = ReadonlyMap<string, string | null>;

/** Directives whose argument is a list of field names that merge when repeated (§5.2.2.4, §5.2.2.7). */
const FIELD_LIST_DIRECTIVES = new Set(['no-cache', 'private']);

const COMMA = 44;
const EQUALS = 61;
const QUOTE = 34;
const BACKSLASH = 92;

function isWhitespace(code: number): boolean {
  return code === 32 || code === 9;
}

/**
 * Parses a Cache-Control value (several field lines already combined with ", ").
 *
 * Choices where RFC 9111 §4.2.1 leaves room ("either the first occurrence should be used or the
 * response should be considered stale"; "the most restrictive directive should be honored"):
 * - a directive that appears twice keeps its first argument;
 * - `no-cache` and `private` are the exception: repeated field-name lists are merged, and the
 *   unqualified form wins over any list, since it is the more restrictive;
 * - names are compared case-insensitively (§5.2) and stored lower-case; arguments keep their case;
 * - members with an empty name are skipped; an unterminated quoted string runs to the end;
 * - whitespace around "=" is accepted (`max-age = 60`, `private = "set-cookie"`), though §5.2's
 *   grammar has none there: read strictly, such a member would be a directive svc does not know and
 *   ignores, which lifts a restriction (`no-cache = "set-cookie"`) as readily as it drops a lifetime.
 *   CDN-Cache-Control is a Structured Field instead, and a space there makes the field invalid
 *   (RFC 9651 §4.2, targeted-directives.ts).
 */
export function parseCacheControl(value: string | undefined): CacheControlDirectives {
  const directives = new Map<string, string | null>();
  if (value === undefined) return directives;
  const length = value.length;
  let i = 0;
  while (i < length) {
    // Skip separators and whitespace before a name.
    let code = value.charCodeAt(i);
    while (i < length && (code === COMMA || isWhitespace(code))) code = value.charCodeAt(++i);
    if (i >= length) break;
    const nameStart = i;
    while (i < length && (code = value.charCodeAt(i)) !== COMMA && code !== EQUALS) i++;
    const name = value.slice(nameStart, i).trim().toLowerCase();
    let argument: string | null = null;
    if (i < length && value.charCodeAt(i) === EQUALS) {
      i++;
      while (i < length && isWhitespace(value.charCodeAt(i))) i++;
      if (i < length && value.charCodeAt(i) === QUOTE) {
        i++;
        let unquoted = '';
        let runStart = i;
        while (i < length && (code = value.charCodeAt(i)) !== QUOTE) {
          if (code === BACKSLASH && i + 1 < length) {
            unquoted += value.slice(runStart, i);
            runStart = i + 1;
            i += 2;
          } else {
            i++;
          }
        }
        argument = unquoted + value.slice(runStart, i);
        // Skip the closing quote and anything up to the next comma.
        while (i < length && value.charCodeAt(i) !== COMMA) i++;
      } else {
        const argumentStart = i;
        while (i < length && value.charCodeAt(i) !== COMMA) i++;
        argument = value.slice(argumentStart, i).trim();
      }
    }
    if (name.length === 0) continue;
    const previous = directives.get(name);
    if (previous === undefined) {
      directives.set(name, argument);
    } else if (FIELD_LIST_DIRECTIVES.has(name) && previous !== null) {
      directives.set(name, argument === null ? null : `${previous}, ${argument}`);
    }
  }
  return directives;
}

/** RFC 9111 §1.2.2: delta-seconds larger than this are taken as this value. */
export const DELTA_SECONDS_MAX = 2147483648;

/**
 * Reads delta-seconds (RFC 9111 §1.2.2): 1*DIGIT, in seconds. Returns undefined when `value` is
 * absent or not a non-negative integer; the caller decides what an invalid value means.
 */
export function parseDeltaSeconds(value: string | null | undefined): number | undefined {
  if (value == null || value.length === 0) return undefined;
  let seconds = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    seconds = seconds * 10 + digit;
    if (seconds > DELTA_SECONDS_MAX) return DELTA_SECONDS_MAX;
  }
  return seconds;
}

/** Splits a field-name list argument (`no-cache="a, b"`) into lower-case names, empties dropped. */
export function parseFieldNameList(value: string | null | undefined): string[] {
  if (value == null) return [];
  const names: string[] = [];
  let start = 0;
  for (let i = 0; i <= value.length; i++) {
    if (i === value.length || value.charCodeAt(i) === COMMA) {
      const name = value.slice(start, i).trim().toLowerCase();
      if (name.length > 0 && !names.includes(name)) names.push(name);
      start = i + 1;
    }
  }
  return names;
}
