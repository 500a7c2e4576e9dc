// What a background refresh needs of the client request that found an entry: the path, the Host and
// the request fields the entry's Vary names, and nothing else. Cookies and credentials the response did
// not vary on are not kept (the registry is persisted to disk), so the origin answers the refresh as
// it answers any client sending the same selecting fields.
import type { OriginRequest } from '../proxy/origin-fetch.js';

export interface RefetchRequest {
  /** Path and query, as the client sent them. */
  path: string;
  /** The client's Host field; '' when it sent none. */
  host: string;
  /** Raw `[name, value, …]` of the request fields named by the entry's Vary, as the client sent them. */
  varyFields: string[];
}

/** Takes from a client request the fields a refetch of the variant it selected needs. */
export function refetchRequestOf(request: OriginRequest, varyNames: readonly string[]): RefetchRequest {
  let host = '';
  const varyFields: string[] = [];
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name === 'host' && host === '') host = raw[i + 1]!;
    else if (varyNames.includes(name)) varyFields.push(raw[i]!, raw[i + 1]!);
  }
  return { path: request.path, host, varyFields };
}

/**
 * The origin request of a refresh, or undefined when none can be built: no Host, or a path and host
 * that do not form an http URL (an absolute-form or `*` request target, a host with a space).
 */
export function originRequestOf(refetch: RefetchRequest): OriginRequest | undefined {
  if (refetch.host === '' || !refetch.path.startsWith('/')) return undefined;
  try {
    // URL parsing is the check a host with a space, a bad port or a control character fails.
    new URL(`http://${refetch.host}${refetch.path}`);
  } catch {
    return undefined;
  }
  // No client: the refresh is svc's own request, so there is no address to forward.
  return { path: refetch.path, rawHeaders: ['host', refetch.host, ...refetch.varyFields], clientAddress: '' };
}
