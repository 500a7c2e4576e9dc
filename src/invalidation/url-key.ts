// Turns an operator's URL into the primary key the proxy stores entries under, and splits a key back
// into the host and path a ban's regexes are matched against.
import { storedKeyOfUrl } from '../cache/policy/cache-key.js';

/** The stored key of an absolute http(s) URL with a host (either scheme), or undefined for anything else. */
export function keyOfUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  if (parsed.hostname.length === 0) return undefined;
  return storedKeyOfUrl(parsed);
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
