// Policy functions read header fields through one tiny accessor, so they work the same on Node's
// parsed `IncomingHttpHeaders`, on undici's response headers and on the flat raw lists the cache stores.

import type { IncomingHttpHeaders } from 'node:http';

/**
 * Returns the combined value of a header field, or undefined when the field is absent. `name` is
 * lower-case. Several field lines of one name are combined with ", " (RFC 9110 §5.3).
 */
export type HeaderLookup = (name: string) => string | undefined;

/** A lookup that answers undefined for every name: a request or response without header fields. */
export const NO_HEADERS: HeaderLookup = () => undefined;

/**
 * Reads Node's parsed headers (also undici's `Record<string, string | string[]>`): names are already
 * lower-case; array values (repeated lines) are combined per RFC 9110 §5.3.
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
 * Reads a flat raw list `[name, value, name, value, …]` (names in any case, as `rawHeaders` and
 * `CacheEntry.headers` hold them). The list is indexed once, so each lookup costs one map read.
 */
export function headersFromRaw(raw: readonly string[]): HeaderLookup {
  const combined = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    const previous = combined.get(name);
    combined.set(name, previous === undefined ? value : `${previous}, ${value}`);
  }
  return (name) => combined.get(name);
}

/** The first value of a field in a flat raw list, compared case-insensitively, without indexing it. */
export function firstRawValue(raw: readonly string[], lowerCaseName: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) return raw[i + 1];
  }
  return undefined;
}
