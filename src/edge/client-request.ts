// What the data plane learns of a client request before routing it: the scheme, authority and target
// it names, parsed and validated, the cache key built from them, and who the client is. Requests that
// name nothing valid are refused here with the status RFC 9112 §3.2 asks for.
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { primaryKey } from '../cache/policy/cache-key.js';
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

/**
 * Reads a client request: exactly one Host line (also for an absolute-form target, RFC 9112 §3.2),
 * a valid authority and target, and, from a trusted proxy only, X-Forwarded-Proto and
 * X-Forwarded-Host. The authority is the trusted X-Forwarded-Host, else the absolute-form target's
 * (which takes precedence over Host, RFC 9112 §3.2.2), else Host's.
 */
export function readEdgeRequest(request: IncomingMessage, options: EdgeRequestOptions): EdgeRequest | EdgeRejection {
  const peerAddress = plainAddress(request.socket.remoteAddress ?? '');
  const trusted = options.trustedProxies.trusts(peerAddress);
  const raw = request.rawHeaders;
  let hostLines = 0;
  let hostValue = '';
  let forwardedFor: string | undefined;
  let forwardedProto: string | undefined;
  let forwardedHost: string | undefined;
  let forwarded: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
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
  if (hostLines === 0 && (request.httpVersionMinor >= 1 || target.form === 'origin')) return reject(400, 'missing_host');
  const hostAuthority = hostLines === 0 ? undefined : parseAuthority(hostValue);
  if (hostLines === 1 && hostAuthority === undefined) return reject(400, 'invalid_host');

  let scheme = options.listenerScheme;
  if (forwardedProto !== undefined) {
    const proto = firstElement(forwardedProto).toLowerCase();
    if (proto !== 'http' && proto !== 'https') return reject(400, 'invalid_forwarded_proto');
    scheme = proto;
  }
  // A client may not claim, in an absolute-form target, a scheme its connection does not have.
  if (target.scheme !== undefined && target.scheme !== scheme) return reject(421, 'scheme_mismatch');
  let authority = target.authority ?? hostAuthority!;
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
