// What the data plane learns of a client request before routing it: the scheme, authority and target
// it names, parsed and validated, the cache key built from them, and who the client is. Requests that
// name nothing valid are refused here with the status RFC 9112 §3.2 asks for. An HTTP/2 request
// names its authority in `:authority` and its scheme in `:scheme` (RFC 9113 §8.3.1): read as Host and
// an absolute-form target's scheme are, so that it has the same key as the HTTP/1.1 request for the
// same resource.
import { isIP } from 'node:net';
import { primaryKey } from '../cache/policy/cache-key.js';
import type { IncomingRequest } from '../http/server-messages.js';
import { connectionOf } from './client-connection.js';
import { formatAuthority, parseAuthority, type Authority } from '../http/authority.js';
import { parseRequestTarget, type Scheme } from '../http/request-target.js';
import { plainAddress, type TrustedProxies } from './trusted-proxies.js';

/** A request the edge accepted, in validated parts. */
export interface EdgeRequest {
  /** The scheme the client used: the listener's, or what a trusted proxy says in X-Forwarded-Proto. */
  readonly scheme: Scheme;
  readonly authority: Authority;
  /** `host[:port]` as in the key (default port left out): the Host and X-Forwarded-Host the origin gets. */
  readonly host: string;
  /** Origin-form path and query, byte for byte as requested: what the origin is asked for. */
  readonly pathAndQuery: string;
  /** The path alone, for route matching. */
  readonly path: string;
  /** The primary cache key (RFC 9111 §2). */
  readonly key: string;
  /** The connection's peer. */
  readonly peerAddress: string;
  /** The client as far as svc can tell: a trusted proxy's last X-Forwarded-For entry, else the peer. */
  readonly clientAddress: string;
  /** Set when the peer is a trusted proxy: the X-Forwarded-For it sent, which svc extends. */
  readonly forwardedFor: string | undefined;
  /** Set when the peer is a trusted proxy: the Forwarded it sent, which svc extends. */
  readonly forwarded: string | undefined;
}

/** Why a request was refused at the edge; `reason` is the stable word of logs and metrics. */
export interface EdgeRejection {
  readonly status: 400 | 421;
  readonly reason:
    | 'missing_host'
    | 'repeated_host'
    | 'invalid_host'
    | 'authority_mismatch'
    | 'invalid_target'
    | 'scheme_mismatch'
    | 'invalid_forwarded_proto'
    | 'invalid_forwarded_host';
}

/** What the data plane needs to read a request: its listener's scheme and whom it trusts. */
export interface EdgeRequestOptions {
  /** The scheme of the listener itself: https when it terminates TLS, else http. */
  readonly listenerScheme: Scheme;
  readonly trustedProxies: TrustedProxies;
}

function reject(status: EdgeRejection['status'], reason: EdgeRejection['reason']): EdgeRejection {
  return { status, reason };
}

function firstElement(value: string): string {
  const comma = value.indexOf(',');
  return (comma < 0 ? value : value.slice(0, comma)).trim();
}

function lastElement(value: string): string {
  return value.slice(value.lastIndexOf(',') + 1).trim();
}

/** Whether two authorities name the same host and port (the default port written or not). */
function sameAuthority(a: Authority, b: Authority, scheme: Scheme): boolean {
  return formatAuthority(a, scheme) === formatAuthority(b, scheme);
}

/**
 * Reads a client request: exactly one Host line (also for an absolute-form target, RFC 9112 §3.2),
 * or over HTTP/2 an `:authority` (with a Host, if any, naming the same: RFC 9113 §8.3.1), a valid
 * authority and target, and, from a trusted proxy only, X-Forwarded-Proto and X-Forwarded-Host. The
 * authority is the trusted X-Forwarded-Host, else the absolute-form target's (which takes precedence
 * over Host, RFC 9112 §3.2.2), else `:authority`'s, else Host's.
 */
export function readEdgeRequest(request: IncomingRequest, options: EdgeRequestOptions): EdgeRequest | EdgeRejection {
  const peerAddress = plainAddress(connectionOf(request)?.remoteAddress ?? '');
  const trusted = options.trustedProxies.trusts(peerAddress);
  const raw = request.rawHeaders;
  let hostLines = 0;
  let hostValue = '';
  let forwardedFor: string | undefined;
  let forwardedProto: string | undefined;
  let forwardedHost: string | undefined;
  let forwarded: string | undefined;
  let pseudoAuthority: string | undefined;
  let pseudoScheme: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // A pseudo-header: HTTP/2 only (a colon cannot start an HTTP/1.1 field name), each at most once
    // (nghttp2 refuses a repeated one).
    if (name.charCodeAt(0) === 0x3a) {
      if (name === ':authority') pseudoAuthority = raw[i + 1]!;
      else if (name === ':scheme') pseudoScheme = raw[i + 1]!;
      continue;
    }
    // Compared by length first: this loop runs on every request, hits included.
    if (name.length === 4) {
      if (name.toLowerCase() === 'host') {
        hostLines++;
        hostValue = raw[i + 1]!;
      }
      continue;
    }
    if (!trusted) continue;
    const lower = name.toLowerCase();
    const value = raw[i + 1]!;
    if (lower === 'x-forwarded-for') forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
    else if (lower === 'x-forwarded-proto') forwardedProto ??= value;
    else if (lower === 'x-forwarded-host') forwardedHost ??= value;
    else if (lower === 'forwarded') forwarded = forwarded === undefined ? value : `${forwarded}, ${value}`;
  }
  if (hostLines > 1) return reject(400, 'repeated_host');
  const target = parseRequestTarget(request.url ?? '');
  if (target === undefined) return reject(400, 'invalid_target');
  if (hostLines === 0 && pseudoAuthority === undefined && (request.httpVersionMinor >= 1 || target.form === 'origin')) return reject(400, 'missing_host');
  const hostAuthority = hostLines === 0 ? undefined : parseAuthority(hostValue);
  if (hostLines === 1 && hostAuthority === undefined) return reject(400, 'invalid_host');
  const namedAuthority = pseudoAuthority === undefined ? hostAuthority : parseAuthority(pseudoAuthority);
  if (namedAuthority === undefined && pseudoAuthority !== undefined) return reject(400, 'invalid_host');

  let scheme = options.listenerScheme;
  if (forwardedProto !== undefined) {
    const proto = firstElement(forwardedProto).toLowerCase();
    if (proto !== 'http' && proto !== 'https') return reject(400, 'invalid_forwarded_proto');
    scheme = proto;
  }
  // A client may not claim, in an absolute-form target or `:scheme`, a scheme its connection does not have.
  if (target.scheme !== undefined && target.scheme !== scheme) return reject(421, 'scheme_mismatch');
  if (pseudoScheme !== undefined && pseudoScheme.toLowerCase() !== scheme) return reject(421, 'scheme_mismatch');
  if (pseudoAuthority !== undefined && hostAuthority !== undefined && !sameAuthority(namedAuthority!, hostAuthority, scheme)) return reject(400, 'authority_mismatch');
  let authority = target.authority ?? namedAuthority!;
  if (forwardedHost !== undefined) {
    const claimed = parseAuthority(firstElement(forwardedHost));
    if (claimed === undefined) return reject(400, 'invalid_forwarded_host');
    authority = claimed;
  }
  let clientAddress = peerAddress;
  if (forwardedFor !== undefined) {
    const last = lastElement(forwardedFor);
    if (isIP(last) !== 0) clientAddress = plainAddress(last);
  }
  const { pathAndQuery } = target;
  return {
    scheme,
    authority,
    host: formatAuthority(authority, scheme),
    pathAndQuery,
    path: target.pathEnd === pathAndQuery.length ? pathAndQuery : pathAndQuery.slice(0, target.pathEnd),
    key: primaryKey({ scheme, authority, pathAndQuery }),
    peerAddress,
    clientAddress,
    forwardedFor,
    forwarded,
  };
}

export function isEdgeRejection(read: EdgeRequest | EdgeRejection): read is EdgeRejection {
  return 'reason' in read;
}

/**
 * The key of a request given as a Host value and a target, for a scheme already known (a peer's
 * forwarded fetch); undefined when either part is not valid.
 */
export function keyOfRequest(scheme: Scheme, host: string, target: string): string | undefined {
  const parsed = parseRequestTarget(target);
  const authority = parsed?.authority ?? parseAuthority(host);
  if (parsed === undefined || authority === undefined) return undefined;
  return primaryKey({ scheme, authority, pathAndQuery: parsed.pathAndQuery });
}
