// Policy functions read header fields through one tiny accessor, so they work the same on the flat raw
// lists of a request, an origin answer or a stored entry, and on undici's parsed response headers.

import type { IncomingHttpHeaders } from 'node:http';

/**
 * Returns the combined value of a header field, or undefined when the field is absent. `name` is
 * lower-case. Several field lines of one name are combined with ", " (RFC 9110 §5.3), Cookie lines
 * with "; ".
 */
export type HeaderLookup = (name: string) => string | undefined;

/** A lookup that answers undefined for every name: a request or response without header fields. */
export const NO_HEADERS: HeaderLookup = () => undefined;

/**
 * Reads parsed headers (undici's response headers, Node's `IncomingHttpHeaders`): names are already
 * lower-case; array values (repeated lines) are combined per RFC 9110 §5.3. A client request is read
 * with headersFromRaw instead: Node's parsed form drops repeats of some fields and joins others its
 * own way.
 */
export function headersFromIncoming(
  headers: IncomingHttpHeaders | Readonly<Record<string, string | readonly string[] | undefined>>,
): HeaderLookup {
  return (name) => {
    const value = (headers as Readonly<Record<string, string | readonly string[] | undefined>>)[name];
    if (value === undefined || typeof value === 'string') return value;
    return value.join(', ');
  };
}

/**
 * Whether a raw field name is `lowerCaseName`, compared ASCII case-insensitively without making a
 * lower-case copy: names differ in length far more often than in spelling, so most fields cost one
 * comparison.
 */
function isFieldName(field: string, lowerCaseName: string): boolean {
  if (field.length !== lowerCaseName.length) return false;
  for (let i = 0; i < field.length; i++) {
    const code = field.charCodeAt(i);
    // 0x41–0x5a are A–Z; setting bit 0x20 makes them a–z.
    if ((code >= 0x41 && code <= 0x5a ? code | 0x20 : code) !== lowerCaseName.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Reads a flat raw list `[name, value, name, value, …]` (names in any case, as `rawHeaders` and
 * `CacheEntry.headers` hold them). Repeated lines are combined with ", " (RFC 9110 §5.3), except
 * Cookie, whose lines are joined with "; " as RFC 9113 §8.2.3 says for cookies split across fields.
 *
 * Every lookup scans the list. A request carries a handful of fields and a hit asks about nine, so
 * this costs less than indexing them, and it reads a list of strings where Node's parsed-headers
 * object has a different shape per request (every property load on it is megamorphic). An origin
 * answer is asked about more fields, on the miss path, where scanning a dozen costs about what
 * indexing them did. Every path that reads a client request's fields (the data plane, background
 * revalidation, refresh, peer fetch) reads them through this, so a request selects the same Vary
 * variant whichever path looks it up.
 */
export function headersFromRaw(raw: readonly string[]): HeaderLookup {
  return (name) => {
    let combined: string | undefined;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (!isFieldName(raw[i] as string, name)) continue;
      const value = raw[i + 1] as string;
      combined = combined === undefined ? value : `${combined}${name === 'cookie' ? '; ' : ', '}${value}`;
    }
    return combined;
  };
}

/** The first value of a field in a flat raw list, compared case-insensitively. */
export function firstRawValue(raw: readonly string[], lowerCaseName: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (isFieldName(raw[i] as string, lowerCaseName)) return raw[i + 1];
  }
  return undefined;
}
