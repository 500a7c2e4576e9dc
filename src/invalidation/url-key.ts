// Turns an operator's URL into the primary keys the proxy stores entries under, with the data plane's
// own rules (src/edge/request-target.ts), and splits a key back into the host and path a ban's
// regexes are matched against.
import { primaryKey } from '../cache/policy/cache-key.js';
import { parseAbsoluteUrl, type Scheme } from '../edge/request-target.js';

const SCHEMES: readonly Scheme[] = ['http', 'https'];

/** The key a client request for this absolute http(s) URL is stored under; undefined for anything else. */
export function keyOfUrl(url: string): string | undefined {
  const parts = parseAbsoluteUrl(url);
  return parts && primaryKey(parts);
}

/**
 * The keys a purge or refresh of `url` covers: the URL's own key first, then the same authority, path
 * and query under the other scheme. svc keeps a resource's http and https copies apart (an origin
 * often answers http with a redirect to https), but an operator names a resource, and a purge must
 * not miss the copy fetched under the scheme the operator did not type (behind a TLS terminator that
 * is not a trusted proxy, every copy is http).
 */
export function keysOfUrl(url: string): string[] | undefined {
  const parts = parseAbsoluteUrl(url);
  if (parts === undefined) return undefined;
  const keys = [primaryKey(parts)];
  for (const scheme of SCHEMES) if (scheme !== parts.scheme) keys.push(primaryKey({ ...parts, scheme }));
  return keys;
}

/**
 * What a ban matches in a primary key `scheme://host[:port]/path?query`, as UTF-8 bytes: RE2 converts
 * a JavaScript string on every call, so the lazy check converts once and hands every regex the bytes.
 */
export interface KeyParts {
  /** `host[:port]` as in the key: lower-cased, the scheme's default port removed. */
  host: Buffer;
  /** The path and query, byte for byte as requested (Varnish's `req.url`). */
  pathAndQuery: Buffer;
}

export function keyParts(key: string): KeyParts {
  const scheme = key.indexOf('://');
  const hostStart = scheme < 0 ? 0 : scheme + 3;
  const slash = key.indexOf('/', hostStart);
  const host = slash < 0 ? key.slice(hostStart) : key.slice(hostStart, slash);
  const pathAndQuery = slash < 0 ? '/' : key.slice(slash);
  return { host: Buffer.from(host, 'utf8'), pathAndQuery: Buffer.from(pathAndQuery, 'utf8') };
}
