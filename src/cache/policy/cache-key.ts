// Primary cache keys (RFC 9111 §2): the target URI, normalised only where RFC 3986 §6.2.3 says two
// spellings name the same resource for http and https.

/** What primaryKey does, for documentation and the admin API's debug output. */
export const PRIMARY_KEY_DESCRIPTION =
  'scheme://host[:port]/path?query of the target URI: scheme and host lower-cased, the default port ' +
  '(80 for http, 443 for https) and an empty port removed, an empty path written "/", any fragment ' +
  'dropped; path and query are kept byte for byte (no percent-decoding, no dot-segment removal), ' +
  'because an origin may tell those spellings apart. GET and HEAD share a key; Vary selects among ' +
  'variants under it.';

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' };

function normaliseHost(scheme: string, host: string): string {
  const lower = host.toLowerCase();
  // The port separator is the last colon after any IPv6 literal's closing bracket. Scanned by hand:
  // this runs on every request, and lastIndexOf is a call into V8's runtime.
  let colon = -1;
  for (let i = lower.length - 1; i >= 0; i--) {
    const code = lower.charCodeAt(i);
    if (code === 0x3a) {
      colon = i;
      break;
    }
    if (code === 0x5d) break;
  }
  if (colon < 0) return lower;
  const portLength = lower.length - colon - 1;
  const defaultPort = DEFAULT_PORTS[scheme];
  const isDefault = defaultPort !== undefined && portLength === defaultPort.length && lower.startsWith(defaultPort, colon + 1);
  return portLength === 0 || isDefault ? lower.slice(0, colon) : lower;
}

/** The primary key of a request (as `CacheEntry.key`). `pathAndQuery` is the request target. */
export function primaryKey(scheme: string, host: string, pathAndQuery: string): string {
  const lowerScheme = scheme.toLowerCase();
  const hash = pathAndQuery.indexOf('#');
  let path = hash < 0 ? pathAndQuery : pathAndQuery.slice(0, hash);
  if (!path.startsWith('/')) path = `/${path}`;
  return `${lowerScheme}://${normaliseHost(lowerScheme, host)}${path}`;
}

/** The primary key of an absolute URL already parsed by WHATWG URL (which normalises the path). */
export function primaryKeyOfUrl(url: URL): string {
  return primaryKey(url.protocol.slice(0, -1), url.host, url.pathname + url.search);
}

/**
 * The scheme of every key svc stores: its data plane speaks plain HTTP, with TLS ended in front of it,
 * so a resource has one key whichever scheme its public URL has.
 */
export const STORED_SCHEME = 'http';

/**
 * The key under which svc holds the content of an operator's URL (purge, ban, refresh, cachecheck):
 * `https://shop.example/a` and `http://shop.example/a` name the same stored entry.
 */
export function storedKeyOfUrl(url: URL): string {
  return primaryKey(STORED_SCHEME, url.host, url.pathname + url.search);
}
