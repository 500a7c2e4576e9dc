// Dashboard sessions (spec §5 item 5): a session is a cookie the server can check without storing
// it, `<expiry s>.<nonce>.<mac>`, where the MAC is an HMAC-SHA256 under a key derived from the admin
// token (HKDF). A new admin token therefore invalidates every session at once, and a restart keeps
// sessions alive as long as the token stays. Each session has a CSRF token, an HMAC of its nonce, that
// the dashboard's pages carry and every state change must present. Logging out revokes the nonce
// until the session would have expired. Decisions recorded in docs/decisions.md.
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../api/api-error.js';

/** The cookie's name: one name, whatever the scheme, so a script's cookie jar needs no special case. */
export const SESSION_COOKIE = 'svc_session';
/**
 * 8 hours, absolute (never extended by use): one operator shift. Long enough not to log someone out
 * in the middle of an incident, short enough that a forgotten browser tab does not stay an admin.
 */
export const SESSION_LIFETIME_MS = 8 * 60 * 60 * 1000;
/** Logged-out sessions remembered at most; past it the oldest are forgotten (see revoke()). */
export const REVOKED_SESSIONS_MAX = 10_000;

const NONCE_BYTES = 16;
const MAC_BYTES = 32;
const COOKIE_PATTERN = /^(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

const REALM = { 'WWW-Authenticate': 'Bearer realm="svc"' };

export class SessionExpiredError extends ApiError {
  constructor() {
    super(401, 'session_expired', 'the dashboard session has expired or was logged out; log in again', REALM);
  }
}

export class InvalidSessionError extends ApiError {
  constructor() {
    super(401, 'invalid_session', 'the dashboard session cookie is not valid (the admin token may have changed); log in again', REALM);
  }
}

export class CsrfRejectedError extends ApiError {
  constructor(why: string) {
    super(403, 'csrf_rejected', why);
  }
}

export interface Session {
  readonly nonce: string;
  readonly expiresAtMs: number;
}

export interface DashboardSessionsOptions {
  /** The current admin token: the MAC key is derived from it each time it changes. */
  adminToken: () => string;
  /** Wall clock, ms since the epoch (the node's, so tests can move it). */
  now: () => number;
}

export class DashboardSessions {
  readonly lifetimeMs = SESSION_LIFETIME_MS;
  readonly #adminToken: () => string;
  readonly #now: () => number;
  #keyFor: { token: string; key: Buffer } | undefined;
  /** Nonce → expiry (ms) of logged-out sessions, in logout order. */
  readonly #revoked = new Map<string, number>();

  constructor(options: DashboardSessionsOptions) {
    this.#adminToken = options.adminToken;
    this.#now = options.now;
  }

  /** A new session; the caller has checked the admin token. Returns the cookie value too. */
  create(): { session: Session; cookieValue: string } {
    const expiresAtS = Math.floor((this.#now() + this.lifetimeMs) / 1000);
    const nonce = randomBytes(NONCE_BYTES).toString('base64url');
    const session = { nonce, expiresAtMs: expiresAtS * 1000 };
    return { session, cookieValue: `${expiresAtS}.${nonce}.${this.#mac(`session|${expiresAtS}|${nonce}`)}` };
  }

  /** The session a cookie value stands for; throws InvalidSessionError or SessionExpiredError. */
  verify(cookieValue: string): Session {
    const match = COOKIE_PATTERN.exec(cookieValue);
    if (!match) throw new InvalidSessionError();
    const [, expiresAtS, nonce, mac] = match as unknown as [string, string, string, string];
    if (!safeEqual(mac, this.#mac(`session|${expiresAtS}|${nonce}`))) throw new InvalidSessionError();
    const session = { nonce, expiresAtMs: Number(expiresAtS) * 1000 };
    if (session.expiresAtMs <= this.#now() || this.#revoked.has(nonce)) throw new SessionExpiredError();
    return session;
  }

  /** The session's CSRF token: what its pages carry and its state changes must present. */
  csrfToken(session: Session): string {
    return this.#mac(`csrf|${session.nonce}`);
  }

  /** Throws CsrfRejectedError unless `presented` is the session's CSRF token. */
  checkCsrf(session: Session, presented: string | undefined): void {
    if (presented === undefined || presented === '') throw new CsrfRejectedError('the request lacks the dashboard session\'s CSRF token');
    if (!safeEqual(presented, this.csrfToken(session))) throw new CsrfRejectedError('the CSRF token is not this dashboard session\'s');
  }

  /**
   * Logs a session out: its nonce is refused until it would have expired anyway. The list is bounded:
   * past the bound, expired entries go first, then the oldest logouts. Only someone who holds the
   * admin token can create sessions, so overflowing it on purpose gains nothing.
   */
  revoke(session: Session): void {
    this.#revoked.set(session.nonce, session.expiresAtMs);
    if (this.#revoked.size <= REVOKED_SESSIONS_MAX) return;
    const nowMs = this.#now();
    for (const [nonce, expiresAtMs] of this.#revoked) if (expiresAtMs <= nowMs) this.#revoked.delete(nonce);
    for (const nonce of this.#revoked.keys()) {
      if (this.#revoked.size <= REVOKED_SESSIONS_MAX) break;
      this.#revoked.delete(nonce);
    }
  }

  #mac(message: string): string {
    return createHmac('sha256', this.#key()).update(message).digest('base64url');
  }

  #key(): Buffer {
    const token = this.#adminToken();
    if (this.#keyFor?.token !== token) {
      // A key of its own rather than the token itself: the MAC never doubles as a token oracle.
      this.#keyFor = { token, key: Buffer.from(hkdfSync('sha256', token, 'svc-dashboard', 'session mac v1', MAC_BYTES)) };
    }
    return this.#keyFor.key;
  }
}

/** Constant-time comparison of two base64url strings (lengths are not secret: both are MAC sized). */
function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
