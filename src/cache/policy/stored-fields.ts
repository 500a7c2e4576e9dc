// Which of an origin answer's fields reach the client that asked, and which are stored for every later
// client (RFC 9111 §3.1, §5.2.2.4, §5.2.2.7).

import { SURROGATE_ONLY_FIELDS } from './targeted-cache-control.js';

const NOTHING_OMITTED: readonly string[] = [];

/**
 * Fields about the proxy a request went through, which a cache must not store (§3.1 names exactly
 * these). Proxy-Authenticate and Proxy-Authorization are hop-by-hop and never reach svc's lists;
 * Proxy-Authentication-Info does.
 */
const PROXY_FIELDS: ReadonlySet<string> = new Set(['proxy-authenticate', 'proxy-authentication-info', 'proxy-authorization']);

function keptFields(fields: readonly string[], omit: readonly string[], forStorage: boolean): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = (fields[i] as string).toLowerCase();
    if (name === 'age' || SURROGATE_ONLY_FIELDS.has(name) || omit.includes(name)) continue;
    if (forStorage && PROXY_FIELDS.has(name)) continue;
    kept.push(fields[i] as string, fields[i + 1] as string);
  }
  return kept;
}

/**
 * The answer's fields as the client whose request fetched it gets them: all of them, except `Age`
 * (svc states the age itself, §4) and the surrogate-only fields svc consumed. The fields a
 * `private="…"` or `no-cache="…"` names are kept: those directives limit what a cache stores and
 * reuses, not what it forwards, so a `Set-Cookie` named in `private="set-cookie"` reaches the client
 * it was meant for.
 */
export function forwardedFields(fields: readonly string[]): string[] {
  return keptFields(fields, NOTHING_OMITTED, false);
}

/**
 * The fields stored for later clients: the forwarded ones without the proxy fields (§3.1) and without
 * `omit`, the lower-case names that `private="…"` (a shared cache must not store them, §5.2.2.7) and
 * `no-cache="…"` (not sent on a reuse without validation, §5.2.2.4) name.
 */
export function storedFields(fields: readonly string[], omit: readonly string[]): string[] {
  return keptFields(fields, omit, true);
}
