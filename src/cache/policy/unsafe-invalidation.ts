// Invalidation after unsafe requests (RFC 9111 §4.4).

import type { HeaderLookup } from './header-lookup.js';
import { primaryKey, primaryKeyOfUrl } from './cache-key.js';

/** Safe methods (RFC 9110 §9.2.1); every other method, known or not, invalidates. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** Splits an absolute `scheme://host/path?query` and normalises it as a primary key. */
function keyOfTarget(targetUri: string): string {
  const schemeEnd = targetUri.indexOf('://');
  if (schemeEnd < 0) return targetUri;
  const pathStart = targetUri.indexOf('/', schemeEnd + 3);
  const host = pathStart < 0 ? targetUri.slice(schemeEnd + 3) : targetUri.slice(schemeEnd + 3, pathStart);
  return primaryKey(targetUri.slice(0, schemeEnd), host, pathStart < 0 ? '/' : targetUri.slice(pathStart));
}

/**
 * Primary keys to invalidate after a response to `method` on `targetUri` (absolute,
 * `scheme://host[:port]/path?query`; normalised here as primaryKey does). Only a non-error (2xx or 3xx) response to an unsafe method invalidates: the target URI
 * (a MUST), and the Location and Content-Location URIs (resolved against the target) when they have
 * the target's origin (a MAY that svc takes; another host's URIs are never invalidated, a MUST NOT).
 */
export function invalidationTargets(
  method: string,
  status: number,
  targetUri: string,
  responseHeaders: HeaderLookup,
): string[] {
  if (SAFE_METHODS.has(method) || status < 200 || status > 399) return [];
  const targetKey = keyOfTarget(targetUri);
  const targets = [targetKey];
  let base: URL | undefined;
  for (const name of ['location', 'content-location']) {
    const reference = responseHeaders(name);
    if (reference === undefined || reference.trim().length === 0) continue;
    try {
      base ??= new URL(targetKey);
      const resolved = new URL(reference.trim(), base);
      if (resolved.origin !== base.origin) continue;
      const key = primaryKeyOfUrl(resolved);
      if (!targets.includes(key)) targets.push(key);
    } catch {
      // An unparsable reference names nothing svc could have stored.
    }
  }
  return targets;
}
