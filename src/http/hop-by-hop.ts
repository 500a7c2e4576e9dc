// The one list of hop-by-hop fields in svc (RFC 9110 §7.6.1): they describe a single connection, so
// they are never forwarded, stored, or taken from a stored response.

/**
 * Connection and the fields RFC 9110 §7.6.1 names as connection-specific, plus the legacy ones
 * still seen on the wire (Keep-Alive, Proxy-Connection) and HTTP2-Settings (RFC 7540 §3.2.1), which
 * only means something on the connection it came with.
 */
export const HOP_BY_HOP_FIELDS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** The field names a Connection header lists (lower-case), from one or several field lines. */
export function connectionOptions(value: string | readonly string[] | undefined): Set<string> {
  const options = new Set<string>();
  if (value === undefined) return options;
  for (const line of typeof value === 'string' ? [value] : value) {
    for (const token of line.split(',')) {
      const name = token.trim().toLowerCase();
      if (name) options.add(name);
    }
  }
  return options;
}
