// Header handling between client, svc and origin (RFC 9110 §7.6): hop-by-hop fields, and the fields
// named by Connection, are dropped in both directions; `Via` records svc as an intermediary (§7.6.3)
// and `X-Forwarded-For` carries the client address to the origin.

/** Fields that describe one connection, never forwarded (RFC 9110 §7.6.1, plus legacy ones). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export const VIA_VALUE = '1.1 svc';

function connectionTokens(value: string | string[] | undefined): Set<string> {
  const tokens = new Set<string>();
  if (value === undefined) return tokens;
  for (const line of Array.isArray(value) ? value : [value]) {
    for (const token of line.split(',')) {
      const name = token.trim().toLowerCase();
      if (name) tokens.add(name);
    }
  }
  return tokens;
}

/**
 * svc's own fields between its nodes (the peer-fetch hop marker, whose value is a process secret):
 * whoever set one, an origin never sees it.
 */
const INTERNAL = new Set(['x-svc-peer-hop']);

function isHopByHop(name: string, listed: Set<string>): boolean {
  return HOP_BY_HOP.has(name) || listed.has(name);
}

/**
 * Builds the header fields sent to the origin from the client's raw header list
 * (`IncomingMessage.rawHeaders`: name, value, name, value…).
 */
export function originRequestHeaders(
  rawHeaders: readonly string[],
  clientAddress: string,
  clientProto: 'http' | 'https',
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  let listed: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'connection') listed = connectionTokens(rawHeaders[i + 1]);
  }
  listed ??= new Set();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!;
    if (isHopByHop(name, listed) || INTERNAL.has(name)) continue;
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else headers[name] = [existing, value];
  }
  const via = headers.via;
  headers.via = via === undefined ? VIA_VALUE : `${Array.isArray(via) ? via.join(', ') : via}, ${VIA_VALUE}`;
  const forwardedFor = headers['x-forwarded-for'];
  headers['x-forwarded-for'] =
    forwardedFor === undefined
      ? clientAddress
      : `${Array.isArray(forwardedFor) ? forwardedFor.join(', ') : forwardedFor}, ${clientAddress}`;
  headers['x-forwarded-proto'] ??= clientProto;
  return headers;
}

/**
 * Turns undici's response header object into the flat field list svc stores and sends, without
 * hop-by-hop fields. Values are kept exactly as the origin sent them.
 */
export function responseFieldsFromOrigin(headers: Record<string, string | string[] | undefined>): string[] {
  const listed = connectionTokens(headers.connection);
  const fields: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || isHopByHop(name, listed)) continue;
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
