// Why an origin fetch failed, classified for the client status (spec-free, RFC 9110 §15.6):
// a refused or broken connection is 502 Bad Gateway, an origin too slow to answer is 504, and so is a
// pool with no connection free in time; a client over its own budget of origin requests gets 429.
// Messages name the origin for the log; clients never see them (src/proxy/respond.ts).

export type UpstreamErrorCode = 'upstream_refused' | 'upstream_timeout' | 'upstream_error' | 'upstream_busy' | 'client_busy';

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    readonly code: UpstreamErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get status(): 429 | 502 | 504 {
    if (this.code === 'client_busy') return 429;
    return this.code === 'upstream_timeout' || this.code === 'upstream_busy' ? 504 : 502;
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Maps an undici or socket error onto an UpstreamError; `origin` is named, never credentials. */
export function classifyUpstreamError(error: unknown, origin: string): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
    return new UpstreamError('upstream_timeout', `origin ${origin} did not answer in time`, { cause: error });
  }
  if (typeof code === 'string' && REFUSED_CODES.has(code)) {
    return new UpstreamError('upstream_refused', `origin ${origin} refused the connection`, { cause: error });
  }
  return new UpstreamError('upstream_error', `origin ${origin} failed: ${(error as Error)?.message ?? 'unknown error'}`, {
    cause: error,
  });
}

/** True when the request never reached the origin, so another upstream may safely be tried. */
export function neverReachedOrigin(error: UpstreamError): boolean {
  const code = (error.cause as { code?: unknown } | null)?.code;
  return error.code === 'upstream_refused' || code === 'UND_ERR_CONNECT_TIMEOUT';
}
