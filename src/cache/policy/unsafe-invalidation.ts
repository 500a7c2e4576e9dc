// Invalidation after unsafe requests (RFC 9111 §4.4). The data plane forwards only the methods a
// route lists (`routes[].methods`), so a method the route refuses never reaches the origin and never
// invalidates, whatever an origin would have answered to it.

import type { HeaderLookup } from './header-lookup.js';
import { primaryKey, type KeyParts } from './cache-key.js';
import { formatAuthority } from '../../http/authority.js';
import { parseAbsoluteUrl, type AbsoluteUrl } from '../../http/request-target.js';

/** Safe methods (RFC 9110 §9.2.1); every other method, known or not, invalidates. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * A Location or Content-Location reference resolved against the target, split as the data plane
 * splits a target: an absolute or path-absolute reference keeps its spelling (so it names the key a
 * client request for it has); only a relative-path reference is resolved with WHATWG URL.
 */
function resolveReference(reference: string, target: KeyParts): AbsoluteUrl | undefined {
  const origin = `${target.scheme}://${formatAuthority(target.authority, target.scheme)}`;
  if (/^https?:\/\//i.test(reference)) return parseAbsoluteUrl(reference);
  if (reference.startsWith('//')) return parseAbsoluteUrl(`${target.scheme}:${reference}`);
  if (reference.startsWith('/')) return parseAbsoluteUrl(`${origin}${reference}`);
  try {
    return parseAbsoluteUrl(new URL(reference, `${origin}${target.pathAndQuery}`).href);
  } catch {
    return undefined;
  }
}

/**
 * Primary keys to invalidate after a response to `method` on the target. Only a non-error (2xx or
 * 3xx) response to an unsafe method invalidates: the target URI (a MUST), and the Location and
 * Content-Location URIs when they have the target's origin, scheme included (a MAY that svc takes;
 * another origin's URIs are never invalidated, a MUST NOT).
 */
export function invalidationTargets(method: string, status: number, target: KeyParts, responseHeaders: HeaderLookup): string[] {
  if (SAFE_METHODS.has(method) || status < 200 || status > 399) return [];
  const targets = [primaryKey(target)];
  const authority = formatAuthority(target.authority, target.scheme);
  for (const name of ['location', 'content-location']) {
    const reference = responseHeaders(name)?.trim();
    if (reference === undefined || reference.length === 0) continue;
    const resolved = resolveReference(reference, target);
    if (resolved === undefined || resolved.scheme !== target.scheme || formatAuthority(resolved.authority, resolved.scheme) !== authority) continue;
    const key = primaryKey(resolved);
    if (!targets.includes(key)) targets.push(key);
  }
  return targets;
}
