// Network addresses in the configuration file. Each check is a regular expression, so the JSON Schema
// generated from the valibot schema carries the same rule as a `pattern`.

/** A host name, an IPv4 address, or an IPv6 address in brackets (`[::1]`). */
const HOST = '(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)';
/** 1 to 65535 without leading zeros. */
const PORT = '(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3})';

/** A host name on its own, as `routes[].match.host` compares it with the request's host. */
export const HOST_NAME_PATTERN = new RegExp(`^${HOST}$`);

/** A listener address, `host:port`; port 0 asks the system for a free port (useful in tests). */
export const LISTEN_ADDRESS_PATTERN = new RegExp(`^${HOST}:(?:${PORT}|0)$`);

/** A peer address, `host:port`, with a real port. */
export const PEER_ADDRESS_PATTERN = new RegExp(`^${HOST}:${PORT}$`);

/** An upstream origin: `http(s)://host[:port]`, no path (the request path is appended). */
export const UPSTREAM_URL_PATTERN = new RegExp(`^https?://${HOST}(?::${PORT})?/?$`);

/** The OTLP/HTTP export target (spec §2.3): empty, `host:port` or `http(s)://host:port`. */
export const TRACING_ENDPOINT_PATTERN = new RegExp(`^(?:(?:https?://)?${HOST}:${PORT}/?)?$`);

/** Loopback hosts, where plain HTTP never leaves the machine. */
const LOOPBACK_HOST = '(?:localhost|127(?:\\.\\d{1,3}){3}|\\[::1\\])';
/** A URL path without query or fragment. */
const URL_PATH = "(?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?";

/**
 * The CDN API base URL (`cdn.api_base_url`): https, or plain http to a loopback address only, since
 * every call carries the CDN token; no user:password part (the token has a key of its own), no query.
 */
export const CDN_API_BASE_URL_PATTERN = new RegExp(`^(?:https://${HOST}|http://${LOOPBACK_HOST})(?::${PORT})?${URL_PATH}$`);

/** An IPv4 address in dotted decimal, each part 0..255 without leading zeros. */
const IPV4 = '(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const H16 = '[0-9A-Fa-f]{1,4}';
/** An IPv6 address in any RFC 4291 §2.2 text form, the embedded IPv4 forms included. */
const IPV6 =
  `(?:(?:${H16}:){7}${H16}|(?:${H16}:){1,7}:|(?:${H16}:){1,6}:${H16}|(?:${H16}:){1,5}(?::${H16}){1,2}|` +
  `(?:${H16}:){1,4}(?::${H16}){1,3}|(?:${H16}:){1,3}(?::${H16}){1,4}|(?:${H16}:){1,2}(?::${H16}){1,5}|` +
  `${H16}:(?::${H16}){1,6}|:(?:(?::${H16}){1,7}|:)|(?:${H16}:){6}${IPV4}|::(?:${H16}:){0,5}${IPV4}|` +
  `(?:${H16}:){1,5}:(?:${H16}:){0,4}${IPV4})`;

/** A trusted proxy: an IP address, or a network in CIDR notation (`10.0.0.0/8`, `fd00::/8`). */
export const CIDR_PATTERN = new RegExp(`^(?:${IPV4}(?:/(?:3[0-2]|[12]?\\d))?|${IPV6}(?:/(?:12[0-8]|1[01]\\d|[1-9]?\\d))?)$`);

export interface HostPort {
  /** The host without IPv6 brackets, ready for `server.listen` or `socket.connect`. */
  host: string;
  port: number;
}

/** Splits a `host:port` address the schema accepted (`[::1]:8080` gives host `::1`). */
export function splitHostPort(address: string): HostPort {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return {
    host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host,
    port: Number(address.slice(colon + 1)),
  };
}
