// A failed admin API call, as the client reports it: the HTTP status and the stable `code` from the
// server's `{"error":{"code","message"}}` body, or status 0 with a local code when no answer came.

export type LocalErrorCode =
  /** Nothing listens at the address, or the connection could not be made. */
  | 'unreachable'
  /** No complete answer within the client's timeout. */
  | 'timeout'
  /** An answer came but its body is not what the API documents. */
  | 'invalid_response';

export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';
  constructor(
    /** HTTP status; 0 when no HTTP answer was received. */
    readonly status: number,
    /** The server's error code, or a LocalErrorCode. */
    readonly code: string,
    /** The server's message (or the local explanation), without status and code. */
    readonly detail: string,
  ) {
    super(status === 0 ? `${code}: ${detail}` : `${status} ${code}: ${detail}`);
  }
}
