// The request-target of RFC 9112 §3.2, and the absolute http(s) URLs operators give the admin API,
// parsed by one set of rules so that a purge names exactly the key a client request is stored under.
// Path and query are kept byte for byte: no percent-decoding and no dot-segment removal (an origin
// may tell `/a/./b` from `/a/b`), only checked to hold visible ASCII and no fragment.
import { parseAuthority, type Authority } from './authority.js';

export type Scheme = 'http' | 'https';

export interface RequestTarget {
  /** `origin`: `/path?query`; `absolute`: `scheme://authority/path?query` (RFC 9112 §3.2.1, §3.2.2). */
  readonly form: 'origin' | 'absolute';
  /** The scheme of an absolute-form target; undefined for origin-form. */
  readonly scheme: Scheme | undefined;
  /** The authority of an absolute-form target; undefined for origin-form. */
  readonly authority: Authority | undefined;
  /** Path and query in origin form, as sent ("/" when an absolute-form path is empty). */
  readonly pathAndQuery: string;
  /** Where the query starts in `pathAndQuery` (its length when there is none). */
  readonly pathEnd: number;
}

/** An absolute URL split as the data plane splits an absolute-form target. */
export interface AbsoluteUrl {
  readonly scheme: Scheme;
  readonly authority: Authority;
  readonly pathAndQuery: string;
}

/**
 * True when every character from `start` is visible ASCII and none is `#`: a request-target holds no
 * fragment (RFC 9112 §3.2), and Node's parser already refused controls, spaces and non-ASCII bytes.
 */
function visibleWithoutFragment(text: string, start: number): boolean {
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code >= 0x7f || code === 0x23) return false;
  }
  return true;
}

function schemeOf(text: string): { scheme: Scheme; rest: number } | undefined {
  // Scheme names are case-insensitive (RFC 3986 §3.1).
  const head = text.slice(0, 8).toLowerCase();
  if (head.startsWith('http://')) return { scheme: 'http', rest: 7 };
  if (head.startsWith('https://')) return { scheme: 'https', rest: 8 };
  return undefined;
}

/** `scheme://authority[/path][?query]` with no userinfo; undefined when it is anything else. */
function parseAbsolute(text: string): AbsoluteUrl | undefined {
  const start = schemeOf(text);
  if (start === undefined) return undefined;
  let end = start.rest;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    if (code === 0x2f || code === 0x3f) break;
    end++;
  }
  // parseAuthority refuses `@` (userinfo), so credentials in a target never reach a key.
  const authority = parseAuthority(text.slice(start.rest, end));
  if (authority === undefined || !visibleWithoutFragment(text, end)) return undefined;
  const rest = text.slice(end);
  return { scheme: start.scheme, authority, pathAndQuery: rest.startsWith('/') ? rest : `/${rest}` };
}

function queryStart(pathAndQuery: string): number {
  const query = pathAndQuery.indexOf('?');
  return query < 0 ? pathAndQuery.length : query;
}

/**
 * Parses a request-target in origin-form or absolute-form (http and https only); undefined for
 * anything else, including asterisk-form and authority-form, which svc does not serve.
 */
export function parseRequestTarget(target: string): RequestTarget | undefined {
  if (target.charCodeAt(0) === 0x2f) {
    if (!visibleWithoutFragment(target, 1)) return undefined;
    return { form: 'origin', scheme: undefined, authority: undefined, pathAndQuery: target, pathEnd: queryStart(target) };
  }
  const absolute = parseAbsolute(target);
  if (absolute === undefined) return undefined;
  return { form: 'absolute', ...absolute, pathEnd: queryStart(absolute.pathAndQuery) };
}

/** Characters an operator may type that a client percent-encodes before sending: all but visible ASCII. */
const NEEDS_ENCODING = /[^\u0021-\u007e]+/gu;

/**
 * An operator's absolute URL (purge, refresh, cachecheck) split exactly as the data plane splits an
 * absolute-form target, so it names the key a client request for it is stored under. Before that,
 * what the URL bar shows but the wire never carries is undone: the fragment is dropped, and spaces,
 * controls and non-ASCII characters are percent-encoded as UTF-8, as a browser sends them. Every other
 * character is kept as typed (`/a/./b`, `{id}`, `<1>`, `%7e` stay as they are).
 */
export function parseAbsoluteUrl(url: string): AbsoluteUrl | undefined {
  const hash = url.indexOf('#');
  const withoutFragment = hash < 0 ? url : url.slice(0, hash);
  let encoded: string;
  try {
    encoded = withoutFragment.replace(NEEDS_ENCODING, (run) => encodeURIComponent(run));
  } catch {
    // A lone surrogate has no UTF-8 encoding: no client could have requested it.
    return undefined;
  }
  return parseAbsolute(encoded);
}
