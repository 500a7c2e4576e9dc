// Turns an operator's URL into the primary keys the proxy stores entries under, with the data plane's
// own rules (src/http/request-target.ts), and splits a key back into the host and path a ban's
// regexes are matched against.
import { primaryKey } from '../cache/policy/cache-key.js';
import { parseAbsoluteUrl, type Scheme } from '../http/request-target.js';

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

/** Where the host of a primary key starts and ends (the end is the path's first slash, if any). */
function hostBounds(key: string): { hostStart: number; hostEnd: number } {
  const scheme = key.indexOf('://');
  const hostStart = scheme < 0 ? 0 : scheme + 3;
  const slash = key.indexOf('/', hostStart);
  return { hostStart, hostEnd: slash < 0 ? key.length : slash };
}

/** `host[:port]` of a primary key, as KeyParts.host holds it, as a string. */
export function hostOfKey(key: string): string {
  const { hostStart, hostEnd } = hostBounds(key);
  return key.slice(hostStart, hostEnd);
}

/**
 * Splits keys into KeyParts written into one buffer it reuses, so that a walk over a million entries
 * allocates two small views per key rather than two buffers (whose memory, outside V8's heap, would
 * bring on full garbage collections). The parts of a key are valid until the next split.
 */
export class KeySplitter {
  #scratch = Buffer.allocUnsafe(4096);

  split(key: string): KeyParts {
    const { hostStart, hostEnd } = hostBounds(key);
    // UTF-8 takes at most 3 bytes per UTF-16 unit; "/" is added when the key has no path.
    const most = 3 * key.length + 1;
    if (this.#scratch.length < most) this.#scratch = Buffer.allocUnsafe(most);
    const scratch = this.#scratch;
    const hostBytes = scratch.write(key.slice(hostStart, hostEnd), 0, 'utf8');
    const pathBytes = scratch.write(hostEnd === key.length ? '/' : key.slice(hostEnd), hostBytes, 'utf8');
    return { host: scratch.subarray(0, hostBytes), pathAndQuery: scratch.subarray(hostBytes, hostBytes + pathBytes) };
  }
}
