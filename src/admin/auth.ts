// Bearer-token authentication of the admin API (spec §5, RFC 6750). The presented token and the
// admin token are both hashed to SHA-256 and the digests compared with timingSafeEqual, so neither
// the content nor the length of the admin token leaks through response time. No message, log line
// or metric ever contains either token.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from './api-error.js';
import type { AdminHandler } from './router.js';

const REALM = 'Bearer realm="svc"';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The credentials of an `Authorization: Bearer <token>` field; undefined for any other form. */
function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

export class MissingTokenError extends ApiError {
  constructor() {
    super(401, 'missing_token', 'this endpoint needs an Authorization: Bearer <admin token> header', {
      'WWW-Authenticate': REALM,
    });
  }
}

export class InvalidTokenError extends ApiError {
  constructor() {
    super(401, 'invalid_token', 'the bearer token is not the admin token', {
      'WWW-Authenticate': `${REALM}, error="invalid_token"`,
    });
  }
}

/** Throws unless the request's headers carry the admin token. */
export type TokenCheck = (headers: IncomingHttpHeaders) => void;

/**
 * Throws MissingTokenError or InvalidTokenError unless the request carries the admin token. Given the
 * node's live token (an object whose `value` a configuration reload replaces), it checks against the
 * token of the moment; its digest is recomputed only when the token changes.
 */
export function createTokenCheck(adminToken: string | { readonly value: string }): TokenCheck {
  const current = typeof adminToken === 'string' ? { value: adminToken } : adminToken;
  let expected: { token: string; digest: Buffer } = { token: '', digest: Buffer.alloc(0) };
  const digestOfCurrent = (): Buffer => {
    if (current.value === '') throw new Error('createTokenCheck: the admin token must not be empty');
    if (expected.token !== current.value) expected = { token: current.value, digest: sha256(current.value) };
    return expected.digest;
  };
  digestOfCurrent();
  return (headers) => {
    const digest = digestOfCurrent();
    const presented = bearerToken(headers);
    if (presented === undefined) throw new MissingTokenError();
    if (!timingSafeEqual(sha256(presented), digest)) throw new InvalidTokenError();
  };
}

/** Wraps a handler so that it runs only for requests that carry the admin token. */
export function requireToken(check: TokenCheck, handler: AdminHandler): AdminHandler {
  return (request, response) => {
    check(request.raw.headers);
    return handler(request, response);
  };
}
