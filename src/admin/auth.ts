// Bearer-token authentication of the admin API (spec §5, RFC 6750). The presented token and the
// admin token are both hashed to SHA-256 and the digests compared with timingSafeEqual, so neither
// the content nor the length of the admin token leaks through response time. Wrong tokens are
// limited per client address (auth-failures.ts), counted and logged. No message, log line or metric
// ever contains either token.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Counter } from 'prom-client';
import type { Logger } from '../observe/logger.js';
import { plainAddress } from '../edge/trusted-proxies.js';
import { pathForLog, type RejectionLog } from '../edge/rejections.js';
import { ApiError } from '../api/api-error.js';
import type { AuthFailureLimiter } from './auth-failures.js';
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

export class TooManyAuthFailuresError extends ApiError {
  constructor(retryAfterSeconds: number, requestId: string) {
    super(429, 'too_many_auth_failures', `too many wrong tokens from this address; retry in ${retryAfterSeconds} s (request id ${requestId})`, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/** What the token check does with wrong tokens: limit them per address, count them, log them. */
export interface AuthFailureGuard {
  limiter: AuthFailureLimiter;
  /** `svc_admin_auth_failures_total{result}`. */
  counter: Counter<'result'>;
  logger: Logger;
  /** The admin listener's rejection log: a rate-limited request is a refusal like any other. */
  rejections: RejectionLog;
}

/**
 * Throws unless the request carries the admin token: in its Authorization field, or `presented` when
 * the token comes another way (the dashboard's login form). The request's address is what the
 * wrong-token limit counts.
 */
export type TokenCheck = (request: IncomingMessage, presented?: string) => void;

/**
 * Throws MissingTokenError, InvalidTokenError or TooManyAuthFailuresError unless the request carries
 * the admin token and its address is not over the wrong-token limit. Given the node's live token (an
 * object whose `value` a configuration reload replaces), it checks against the token of the moment;
 * its digest is recomputed only when the token changes.
 */
export function createTokenCheck(adminToken: string | { readonly value: string }, guard: AuthFailureGuard): TokenCheck {
  const current = typeof adminToken === 'string' ? { value: adminToken } : adminToken;
  let expected: { token: string; digest: Buffer } = { token: '', digest: Buffer.alloc(0) };
  const digestOfCurrent = (): Buffer => {
    if (current.value === '') throw new Error('createTokenCheck: the admin token must not be empty');
    if (expected.token !== current.value) expected = { token: current.value, digest: sha256(current.value) };
    return expected.digest;
  };
  digestOfCurrent();
  return (request, presentedOtherwise) => {
    const digest = digestOfCurrent();
    const address = plainAddress(request.socket.remoteAddress ?? '');
    const remote = `${address}:${request.socket.remotePort ?? 0}`;
    const waitMs = guard.limiter.blockedForMs(address);
    if (waitMs > 0) {
      guard.counter.inc({ result: 'rate_limited' });
      const requestId = randomUUID();
      guard.rejections.record({ status: 429, reason: 'auth_rate_limited', requestId, remote, method: request.method, path: pathForLog(request.url) });
      throw new TooManyAuthFailuresError(Math.ceil(waitMs / 1000), requestId);
    }
    const presented = presentedOtherwise ?? bearerToken(request.headers);
    if (presented === undefined || presented === '') throw new MissingTokenError();
    if (!timingSafeEqual(sha256(presented), digest)) {
      guard.limiter.recordFailure(address);
      guard.counter.inc({ result: 'invalid_token' });
      guard.logger.warn({ remote, method: request.method, path: pathForLog(request.url) }, 'wrong admin token');
      throw new InvalidTokenError();
    }
  };
}

/** Wraps a handler so that it runs only for requests that carry the admin token. */
export function requireToken(check: TokenCheck, handler: AdminHandler): AdminHandler {
  return (request, response) => {
    check(request.raw);
    return handler(request, response);
  };
}
