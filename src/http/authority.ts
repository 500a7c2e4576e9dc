// The authority of a request (RFC 9110 §7.2 Host, RFC 9112 §3.2.2 absolute-form, RFC 3986 §3.2):
// `uri-host [":" port]`, parsed into validated parts before anything uses it as a key, a route or a
// header towards the origin. What is accepted:
// - an IP literal in brackets holding an IPv6 address (no zone id, no IPvFuture), written back in
//   its canonical form (`[0::1]` is `[::1]`);
// - a name of letters, digits, `-`, `_` and `.` (DNS names, IPv4 addresses, internal `_` names),
//   lower-cased, at most 253 characters. RFC 3986's reg-name also allows sub-delims (`!$&'()*+,;=`)
//   and percent-encoding, which no DNS name uses and which origins decode in different ways: a Host
//   of `shop.test%2fstatic` would name a path to one of them. svc refuses those with 400.
// - an optional port of 1 to 5 digits in 1..65535 (an empty port, `host:`, means the default one).
// Anything else (userinfo, a path, a second colon, a space) is not an authority.

export interface Authority {
  /** Lower-case name, or an IPv6 literal in brackets in canonical form. */
  readonly host: string;
  /** The port as given; undefined when none was given (or it was empty). */
  readonly port: number | undefined;
}

/** Longest accepted host name: the DNS limit of RFC 1035 §2.3.4 written as text. */
export const MAX_HOST_NAME_LENGTH = 253;

/** 1 for the characters of a host name: ALPHA, DIGIT, "-", ".", "_" (lower-cased when read). */
const NAME_CHAR = new Uint8Array(128);
for (let code = 0x30; code <= 0x39; code++) NAME_CHAR[code] = 1;
for (let code = 0x41; code <= 0x5a; code++) NAME_CHAR[code] = 1;
for (let code = 0x61; code <= 0x7a; code++) NAME_CHAR[code] = 1;
NAME_CHAR[0x2d] = 1;
NAME_CHAR[0x2e] = 1;
NAME_CHAR[0x5f] = 1;

/** The port written after `colon` (`text.length` excluded): undefined when empty, null when invalid. */
function parsePort(text: string, colon: number): number | undefined | null {
  const digits = text.length - colon - 1;
  if (digits === 0) return undefined;
  if (digits > 5) return null;
  let port = 0;
  for (let i = colon + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return null;
    port = port * 10 + (code - 0x30);
  }
  return port >= 1 && port <= 65535 ? port : null;
}

/** The canonical text of an IPv6 address (brackets included), or undefined when it is not one. */
function canonicalIpv6(literal: string): string | undefined {
  // Only hex digits, colons and the dots of an embedded IPv4 part; a zone id (`%25eth0`) is refused.
  if (!/^[0-9A-Fa-f:.]+$/.test(literal) || !literal.includes(':')) return undefined;
  try {
    const { hostname } = new URL(`http://[${literal}]/`);
    return hostname;
  } catch {
    return undefined;
  }
}

/** Parses `uri-host [":" port]`; undefined when the text is not an authority svc accepts. */
export function parseAuthority(text: string): Authority | undefined {
  if (text.length === 0) return undefined;
  if (text.charCodeAt(0) === 0x5b) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    const host = canonicalIpv6(text.slice(1, close));
    if (host === undefined) return undefined;
    if (close === text.length - 1) return { host, port: undefined };
    if (text.charCodeAt(close + 1) !== 0x3a) return undefined;
    const port = parsePort(text, close + 1);
    return port === null ? undefined : { host, port };
  }
  let end = text.length;
  let lower = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x3a) {
      end = i;
      break;
    }
    if (code >= 128 || NAME_CHAR[code] !== 1) return undefined;
    if (code >= 0x41 && code <= 0x5a) lower = true;
  }
  if (end === 0 || end > MAX_HOST_NAME_LENGTH) return undefined;
  const name = end === text.length ? text : text.slice(0, end);
  const host = lower ? name.toLowerCase() : name;
  if (end === text.length) return { host, port: undefined };
  const port = parsePort(text, end);
  return port === null ? undefined : { host, port };
}

/** The default port of a scheme svc serves (RFC 9110 §4.2.1, §4.2.2). */
export function defaultPort(scheme: 'http' | 'https'): number {
  return scheme === 'https' ? 443 : 80;
}

/** `host[:port]` as svc writes it: the port left out when it is the scheme's default or absent. */
export function formatAuthority(authority: Authority, scheme: 'http' | 'https'): string {
  const { host, port } = authority;
  return port === undefined || port === defaultPort(scheme) ? host : `${host}:${port}`;
}
