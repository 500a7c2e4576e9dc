// How a dashboard session authenticates HTTP requests: the cookie that carries it, the same-origin
// check, and the admin API's bearer check widened to accept a session. An API call authenticated by
// the cookie must also carry the session's CSRF token in `X-CSRF-Token` (only the dashboard's own
// pages know it) and must not come from another origin; a request with an Authorization header is
// judged by its token alone, exactly as before.
import type { IncomingHttpHeaders } from 'node:http';
import type { TokenCheck } from '../auth.js';
import { CsrfRejectedError, SESSION_COOKIE, type DashboardSessions, type Session } from './dashboard-session.js';

export const CSRF_HEADER = 'x-csrf-token';

/** The session cookie's value in the Cookie field(s), or undefined. */
export function sessionCookieValue(headers: IncomingHttpHeaders): string | undefined {
  for (const pair of (headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === SESSION_COOKIE) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * Set-Cookie for a session: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Path=/ (the dashboard calls the /v1/ API), Secure when the admin listener speaks TLS.
 */
export function sessionCookieHeader(value: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Max-Age=${maxAgeS}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookieHeader(secure: boolean): string {
  return sessionCookieHeader('', 0, secure);
}

/**
 * Refuses a request another origin's page made: a browser names the page's origin in `Origin` (on
 * every POST and every cross-origin fetch) and says where the request came from in `Sec-Fetch-Site`.
 * Requests without either (curl, scripts) are not a browser being tricked and pass.
 */
export function checkSameOrigin(headers: IncomingHttpHeaders): void {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new CsrfRejectedError(`a ${site} request may not use the dashboard session`);
  const origin = headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new CsrfRejectedError(`the request's Origin ${JSON.stringify(origin)} is not this dashboard's`);
  }
  if (host !== headers.host) throw new CsrfRejectedError(`the request's Origin ${JSON.stringify(origin)} is not this dashboard's`);
}

/** The session of a request carrying the cookie, with the same-origin and CSRF checks an API call needs. */
export function apiSession(sessions: DashboardSessions, headers: IncomingHttpHeaders, cookieValue: string): Session {
  const session = sessions.verify(cookieValue);
  checkSameOrigin(headers);
  const presented = headers[CSRF_HEADER];
  sessions.checkCsrf(session, Array.isArray(presented) ? undefined : presented);
  return session;
}

/**
 * The admin API's token check, widened: a request without an Authorization header but with a session
 * cookie is let through when the session, its origin and its CSRF token are good. A request judged by
 * its token goes through `tokenCheck`, wrong-token limit included; a session is not a token guess (it
 * was made by a login that passed that check) and is judged by the session alone.
 */
export function acceptingSession(tokenCheck: TokenCheck, sessions: DashboardSessions | undefined): TokenCheck {
  if (sessions === undefined) return tokenCheck;
  return (request) => {
    const { headers } = request;
    const cookieValue = headers.authorization === undefined ? sessionCookieValue(headers) : undefined;
    if (cookieValue === undefined) tokenCheck(request);
    else apiSession(sessions, headers, cookieValue);
  };
}
