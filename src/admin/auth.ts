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

/** Throws MissingTokenError or InvalidTokenError unless the request carries the admin token. */
export function createTokenCheck(adminToken: string): (headers: IncomingHttpHeaders) => void {
  if (adminToken === '') throw new Error('createTokenCheck: the admin token must not be empty');
  const expected = sha256(adminToken);
  return (headers) => {
    const presented = bearerToken(headers);
    if (presented === undefined) throw new MissingTokenError();
    if (!timingSafeEqual(sha256(presented), expected)) throw new InvalidTokenError();
  };
}

/** Wraps a handler so that it runs only for requests that carry the admin token. */
export function requireToken(check: (headers: IncomingHttpHeaders) => void, handler: AdminHandler): AdminHandler {
  return (request, response) => {
    check(request.raw.headers);
    return handler(request, response);
  };
}
