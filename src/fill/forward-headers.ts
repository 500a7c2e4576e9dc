// Header handling between client, svc and origin (RFC 9110 §7.6; docs/security.md, "Forwarding
// headers"). Towards the origin, svc itself states who asked for what: Host and X-Forwarded-Host are
// the authority the cache key holds, X-Forwarded-Proto its scheme, X-Forwarded-For and Forwarded the
// connection's peer (extending what a trusted proxy sent, replacing what anyone else sent). Nothing
// the client sends can change those, so nothing an origin builds from them escapes the key. Also
// dropped on the way: the hop-by-hop fields, every `x-svc-*` field (svc's own namespace), Expect
// (svc answers it, RFC 9110 §10.1.1), and the fields the route strips (method and URL overrides by
// default). `Connection` cannot remove anything else: a client listing `host` or `accept-language`
// there would otherwise make the origin answer something other than what the key and Vary say.
import { connectionOptions, HOP_BY_HOP_FIELDS } from '../http/hop-by-hop.js';
import type { Scheme } from '../http/request-target.js';

export const VIA_VALUE = '1.1 svc';

/** Request fields svc's own namespace uses between nodes; never taken from a client to an origin. */
export const SVC_FIELD_PREFIX = 'x-svc-';

/** Request fields svc writes itself (or answers itself), whatever the client sent. */
const SET_BY_SVC: ReadonlySet<string> = new Set([
  'host',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'forwarded',
  'expect',
]);

/**
 * An HTTP/2 pseudo-header (`:method`, `:path`, `:authority`…, RFC 9113 §8.3): it belongs to the
 * client's request line, never to the request forwarded over HTTP/1.1, whose Host svc sets itself.
 */
export function isPseudoField(name: string): boolean {
  return name.charCodeAt(0) === 0x3a;
}

/** What svc states to the origin about a request. */
export interface Forwarding {
  readonly scheme: Scheme;
  /** `host[:port]` as in the key. */
  readonly host: string;
  /** The connection's peer; '' for svc's own requests (background refresh), which have none. */
  readonly peerAddress: string;
  /** X-Forwarded-For a trusted proxy sent; undefined for anyone else. */
  readonly forwardedFor: string | undefined;
  /** Forwarded a trusted proxy sent; undefined for anyone else. */
  readonly forwarded: string | undefined;
  /** Lower-case request field names the route strips. */
  readonly strip: ReadonlySet<string>;
}

/** A node (RFC 7239 §6) or host value as a token where it is one, else quoted. */
function forwardedValue(value: string): string {
  return /^[A-Za-z0-9.\-_]+$/.test(value) ? value : `"${value}"`;
}

function forwardedElement(forwarding: Forwarding): string {
  const forPart = forwarding.peerAddress === '' ? '' : `for=${forwardedValue(forwarding.peerAddress.includes(':') ? `[${forwarding.peerAddress}]` : forwarding.peerAddress)};`;
  return `${forPart}host=${forwardedValue(forwarding.host)};proto=${forwarding.scheme}`;
}

/**
 * Builds the header fields sent to the origin from the client's raw header list
 * (`IncomingMessage.rawHeaders`: name, value, name, value…). svc's own fields come first: an origin
 * that keeps only so many fields (Node keeps 2,000) keeps svc's, whatever the client sent after them.
 */
export function originRequestHeaders(rawHeaders: readonly string[], forwarding: Forwarding): Record<string, string | string[]> {
  const { peerAddress, forwardedFor, forwarded } = forwarding;
  const headers: Record<string, string | string[]> = {
    host: forwarding.host,
    'x-forwarded-host': forwarding.host,
    'x-forwarded-proto': forwarding.scheme,
  };
  if (peerAddress !== '') headers['x-forwarded-for'] = forwardedFor === undefined ? peerAddress : `${forwardedFor}, ${peerAddress}`;
  headers.forwarded = forwarded === undefined ? forwardedElement(forwarding) : `${forwarded}, ${forwardedElement(forwarding)}`;
  // Its place taken now; the client's Via lines go before svc's own entry (RFC 9110 §7.6.3).
  headers.via = VIA_VALUE;
  let via: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (HOP_BY_HOP_FIELDS.has(name) || SET_BY_SVC.has(name) || forwarding.strip.has(name) || name.startsWith(SVC_FIELD_PREFIX) || isPseudoField(name)) continue;
    const value = rawHeaders[i + 1]!;
    if (name === 'via') {
      (via ??= []).push(value);
      continue;
    }
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else headers[name] = [existing, value];
  }
  if (via !== undefined) headers.via = `${via.join(', ')}, ${VIA_VALUE}`;
  return headers;
}

/**
 * Turns undici's response header object into the flat field list svc stores and sends, without
 * hop-by-hop fields and those the origin's Connection lists (the origin is the operator's, so its
 * Connection is followed as RFC 9110 §7.6.1 says). Values are kept exactly as the origin sent them.
 */
export function responseFieldsFromOrigin(headers: Record<string, string | string[] | undefined>): string[] {
  const listed = connectionOptions(headers.connection);
  const fields: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP_FIELDS.has(name) || listed.has(name)) continue;
    if (Array.isArray(value)) for (const line of value) fields.push(name, line);
    else fields.push(name, value);
  }
  return fields;
}

/**
 * Adds svc to the response's Via (RFC 9110 §7.6.3: each intermediary adds itself) as a field line of
 * its own, so any Via line the origin sent stays byte for byte as it was.
 */
export function withVia(fields: string[]): string[] {
  fields.push('via', VIA_VALUE);
  return fields;
}
