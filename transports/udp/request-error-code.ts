// Maps what undici and the socket layer report to the TransportErrorCode the cluster library
// understands. The caller's own causes (timeout, abort, stop) are decided before this is consulted.

import type { TransportErrorCode } from '../../cluster/transport.js';

/** The host answered that nothing listens on the port. */
const REFUSED_CODES = new Set(['ECONNREFUSED']);

/**
 * Certificate verification failures (OpenSSL's names as Node reports them) and TLS alerts: the peer
 * is up but one side refused the other's identity, so the request reached no handler.
 */
function isTlsRefusal(code: string): boolean {
  return (
    code.startsWith('ERR_SSL_') ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('UNABLE_TO_') ||
    code.startsWith('CERT_') ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN'
  );
}

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  // Follow `cause` a few levels: undici wraps socket errors.
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

export function requestErrorCode(error: unknown): TransportErrorCode {
  const codes = codesOf(error);
  if (codes.some((code) => REFUSED_CODES.has(code))) return 'refused';
  if (codes.some(isTlsRefusal)) return 'refused';
  // Everything else (EHOSTUNREACH, ENETUNREACH, a connect timeout, a DNS failure, a reset or closed
  // socket) means no usable connection reached the peer's handler.
  return 'unreachable';
}
