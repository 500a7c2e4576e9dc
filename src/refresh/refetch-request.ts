// What a background refresh needs of the client request that found an entry: the path, the Host and
// the request fields the entry's Vary names, and nothing else. Cookies and credentials the response did
// not vary on are not kept (the registry is persisted to disk), so the origin answers the refresh as
// it answers any client sending the same selecting fields.
import type { OriginRequest } from '../fill/origin-fetch.js';
import { schemeOfKey } from '../cache/policy/cache-key.js';
import { formatAuthority, parseAuthority } from '../http/authority.js';

/** A refresh sends only the Vary-selecting fields it kept, so no route rule has anything to strip. */
const NOTHING_STRIPPED: ReadonlySet<string> = new Set();

export interface RefetchRequest {
  /** Path and query, as the client sent them. */
  path: string;
  /** The authority the entry's key holds (`host[:port]`), as the origin was asked. */
  host: string;
  /** Raw `[name, value, …]` of the request fields named by the entry's Vary, as the client sent them. */
  varyFields: string[];
}

/** Takes from a client request the fields a refetch of the variant it selected needs. */
export function refetchRequestOf(request: OriginRequest, varyNames: readonly string[]): RefetchRequest {
  const varyFields: string[] = [];
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name !== 'host' && varyNames.includes(name)) varyFields.push(raw[i]!, raw[i + 1]!);
  }
  return { path: request.path, host: request.forwarding.host, varyFields };
}

/**
 * The origin request of a refresh of the entry stored under `key`, or undefined when none can be
 * built: no valid Host, or a target that is not origin-form (an absolute-form or `*` request target).
 * It carries no client: svc asks on its own behalf, so nothing is forwarded as a client address, and
 * the scheme is the one the entry was stored under.
 */
export function originRequestOf(refetch: RefetchRequest, key: string): OriginRequest | undefined {
  if (!refetch.path.startsWith('/')) return undefined;
  const authority = parseAuthority(refetch.host);
  if (authority === undefined) return undefined;
  const scheme = schemeOfKey(key);
  return {
    path: refetch.path,
    rawHeaders: refetch.varyFields,
    forwarding: { scheme, host: formatAuthority(authority, scheme), peerAddress: '', forwardedFor: undefined, forwarded: undefined, strip: NOTHING_STRIPPED },
    clientAddress: '',
  };
}
