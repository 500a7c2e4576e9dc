// Dashboard sessions (spec §5 item 5) on their own: the cookie is an HMAC under a key derived from the
// admin token, checked in constant time, with an absolute lifetime, a per-session CSRF token, and
// logout revocation; plus the same-origin rule every state change must pass.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  CsrfRejectedError,
  DashboardSessions,
  InvalidSessionError,
  REVOKED_SESSIONS_MAX,
  SESSION_LIFETIME_MS,
  SessionExpiredError,
} from '../../src/admin/dashboard/dashboard-session.js';
import { checkSameOrigin, sessionCookieHeader, sessionCookieValue } from '../../src/admin/dashboard/session-auth.js';
import { ManualClock } from '../support/svc-harness.js';

const TOKEN = 'session-test-token-0123456789';

function sessions(token = (): string => TOKEN, clock = new ManualClock(true)): { sessions: DashboardSessions; clock: ManualClock } {
  return { sessions: new DashboardSessions({ adminToken: token, now: clock.now }), clock };
}

/** The cookie value with one character of its MAC changed. */
function tampered(value: string): string {
  const last = value.at(-2) === 'A' ? 'B' : 'A';
  return `${value.slice(0, -2)}${last}${value.at(-1)}`;
}

describe('dashboard sessions', () => {
  test('a new session verifies, and its lifetime is 8 hours', () => {
    const { sessions: store, clock } = sessions();
    const { session, cookieValue } = store.create();
    assert.deepEqual(store.verify(cookieValue), session);
    assert.equal(SESSION_LIFETIME_MS, 8 * 60 * 60 * 1000);
    assert.ok(Math.abs(session.expiresAtMs - (clock.now() + SESSION_LIFETIME_MS)) < 1000);
  });

  test('a session expires at its expiry, by the injected clock, and not before', () => {
    const { sessions: store, clock } = sessions();
    const { cookieValue } = store.create();
    clock.advance(SESSION_LIFETIME_MS - 2_000);
    store.verify(cookieValue);
    clock.advance(2_000);
    assert.throws(() => store.verify(cookieValue), SessionExpiredError);
  });

  test('a changed MAC, a changed expiry or a malformed value is refused', () => {
    const { sessions: store } = sessions();
    const { cookieValue } = store.create();
    assert.throws(() => store.verify(tampered(cookieValue)), InvalidSessionError);
    const [expiry, nonce, mac] = cookieValue.split('.') as [string, string, string];
    assert.throws(() => store.verify(`${Number(expiry) + 3600}.${nonce}.${mac}`), InvalidSessionError);
    for (const garbage of ['', 'x', `${expiry}.${nonce}`, `${expiry}.${nonce}.${mac}.x`, TOKEN]) {
      assert.throws(() => store.verify(garbage), InvalidSessionError, garbage);
    }
  });

  test('changing the admin token invalidates every session and its CSRF token', () => {
    let token = TOKEN;
    const { sessions: store } = sessions(() => token);
    const { session, cookieValue } = store.create();
    const csrf = store.csrfToken(session);
    token = 'another-admin-token-0123456789';
    assert.throws(() => store.verify(cookieValue), InvalidSessionError);
    assert.notEqual(store.csrfToken(session), csrf);
    token = TOKEN;
    assert.deepEqual(store.verify(cookieValue), session, 'the same token verifies again');
  });

  test('another node with the same token accepts the session (nothing is stored server-side)', () => {
    const { cookieValue } = sessions().sessions.create();
    assert.doesNotThrow(() => sessions().sessions.verify(cookieValue));
  });

  test('the CSRF token is per session and checked exactly', () => {
    const { sessions: store } = sessions();
    const one = store.create().session;
    const two = store.create().session;
    assert.notEqual(store.csrfToken(one), store.csrfToken(two));
    store.checkCsrf(one, store.csrfToken(one));
    for (const presented of [undefined, '', store.csrfToken(two), store.csrfToken(one).slice(1)]) {
      assert.throws(() => store.checkCsrf(one, presented), CsrfRejectedError, String(presented));
    }
  });

  test('a revoked session is refused, others stay; the revocation list is bounded', () => {
    const { sessions: store } = sessions();
    const gone = store.create();
    const kept = store.create();
    store.revoke(gone.session);
    assert.throws(() => store.verify(gone.cookieValue), SessionExpiredError);
    store.verify(kept.cookieValue);
    for (let i = 0; i < REVOKED_SESSIONS_MAX; i++) store.revoke(store.create().session);
    // The oldest logout was forgotten to keep the bound; the newest are still refused.
    store.verify(gone.cookieValue);
    const last = store.create();
    store.revoke(last.session);
    assert.throws(() => store.verify(last.cookieValue), SessionExpiredError);
  });
});

describe('the session cookie and the same-origin rule', () => {
  test('the cookie is HttpOnly, SameSite=Strict, Path=/, and Secure only over TLS', () => {
    assert.equal(sessionCookieHeader('v', 28800, false), 'svc_session=v; Max-Age=28800; Path=/; HttpOnly; SameSite=Strict');
    assert.equal(sessionCookieHeader('v', 28800, true), 'svc_session=v; Max-Age=28800; Path=/; HttpOnly; SameSite=Strict; Secure');
  });

  test('the session cookie is found among others', () => {
    assert.equal(sessionCookieValue({ cookie: 'a=1; svc_session=abc.def; b=2' }), 'abc.def');
    assert.equal(sessionCookieValue({ cookie: 'xsvc_session=abc' }), undefined);
    assert.equal(sessionCookieValue({}), undefined);
  });

  test('requests from another origin are refused; same-origin ones and scripts without Origin pass', () => {
    const host = '127.0.0.1:9000';
    checkSameOrigin({ host });
    checkSameOrigin({ host, origin: 'http://127.0.0.1:9000', 'sec-fetch-site': 'same-origin' });
    checkSameOrigin({ host, 'sec-fetch-site': 'none' });
    for (const headers of [
      { origin: 'http://127.0.0.1:8080' },
      { origin: 'null' },
      { origin: 'http://evil.example' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
    ]) {
      assert.throws(() => checkSameOrigin({ host, ...headers }), CsrfRejectedError, JSON.stringify(headers));
    }
  });
});
