// Primary cache keys (RFC 9111 §2): the target URI, built from parts the edge has already parsed and
// validated (src/edge/), never by joining raw strings, so no Host or target can spell another key.

import { formatAuthority, type Authority } from '../../http/authority.js';
import type { Scheme } from '../../http/request-target.js';

/** What primaryKey does, for documentation and the admin API's debug output. */
export const PRIMARY_KEY_DESCRIPTION =
  'scheme://host[:port]/path?query of the target URI: the scheme the client used (http, or https ' +
  'when a trusted proxy says so), the host lower-cased, the scheme\'s default port and an empty port ' +
  'removed, an empty path written "/"; path and query are kept byte for byte (no percent-decoding, ' +
  'no dot-segment removal), because an origin may tell those spellings apart. GET and HEAD share a ' +
  'key; Vary selects among variants under it.';

/** The validated parts a key is made of. */
export interface KeyParts {
  readonly scheme: Scheme;
  readonly authority: Authority;
  /** Origin-form path and query, starting with "/". */
  readonly pathAndQuery: string;
}

/** The primary key of a request (as `CacheEntry.key`). */
export function primaryKey(parts: KeyParts): string {
  return `${parts.scheme}://${formatAuthority(parts.authority, parts.scheme)}${parts.pathAndQuery}`;
}

/**
 * Where a key lives in a cluster's ring: the key without its scheme, so the http and https copies of
 * a resource have one owner, and a refresh sent to that owner reaches both.
 */
export function placementKey(key: string): string {
  const schemeEnd = key.indexOf('://');
  return schemeEnd < 0 ? key : key.slice(schemeEnd + 3);
}

/** The scheme a key was stored under. */
export function schemeOfKey(key: string): Scheme {
  return key.startsWith('https://') ? 'https' : 'http';
}
