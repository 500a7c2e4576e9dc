// Maps what libp2p and the sockets under it throw to the cluster's TransportErrorCode.
import { TransportError } from '../../cluster/transport.js';

/** The socket error codes that mean "the host answered, but nothing listens on that port". */
const REFUSED_ERRNO = new Set(['ECONNREFUSED']);

/**
 * libp2p error names that mean the dial reached the peer's host but was turned away: our own gater
 * refused the peer id (DialDeniedError), or the remote's gater closed the connection right after the
 * noise handshake (the dialer then reads an unexpected end of stream).
 */
const REFUSED_NAMES = new Set(['DialDeniedError', 'UnexpectedEOFError', 'ConnectionDeniedError']);

function* causes(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  const pending = [error];
  while (pending.length > 0) {
    const next = pending.shift();
    if (next == null || seen.has(next)) continue;
    seen.add(next);
    yield next;
    if (next instanceof AggregateError) pending.push(...(next.errors as unknown[]));
    if (next instanceof Error) pending.push(next.cause);
  }
}

/** A failure to open a stream to `to`: refused when the host turned us away, unreachable otherwise. */
export function dialFailure(to: string, error: unknown): TransportError {
  for (const cause of causes(error)) {
    if (!(cause instanceof Error)) continue;
    const errno = (cause as NodeJS.ErrnoException).code;
    if ((errno !== undefined && REFUSED_ERRNO.has(errno)) || REFUSED_NAMES.has(cause.name)) {
      return new TransportError('refused', `${to} refused the connection: ${cause.message}`, { cause: error });
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TransportError('unreachable', `${to} could not be reached: ${message}`, { cause: error });
}

/** The stream broke after it was open and before the whole response arrived. */
export function exchangeFailure(to: string, error: unknown): TransportError {
  const message = error instanceof Error ? error.message : String(error);
  return new TransportError('unreachable', `the exchange with ${to} broke off: ${message}`, { cause: error });
}
