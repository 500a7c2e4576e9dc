// Errors of the CDN propagation, one class per condition with a stable `code`. None of their messages
// ever holds the CDN token (spec §5 item 6).
import { ApiError } from '../api/api-error.js';

export type CdnErrorCode =
  | 'no_token' // the cdn block is configured but neither cdn.api_token nor CDN_API_TOKEN holds a token
  | 'invalid_token' // CDN_API_TOKEN holds characters a bearer token cannot have
  | 'corrupt_pending'; // the pending-purge journal holds a damaged record before its last line

/** The CDN propagation cannot start as configured; the node must not start without it. */
export class CdnError extends Error {
  override readonly name = 'CdnError';
  constructor(
    readonly code: CdnErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * With `cdn.async: false`, the admin answer when the CDN did not confirm: 502, since the CDN is the
 * upstream that failed. The invalidation itself was applied (and sent to the cluster) and is never
 * rolled back; the message says so, and whether the CDN purge is still pending or was refused.
 */
export class CdnNotConfirmedError extends ApiError {
  constructor(detail: string) {
    super(502, 'cdn_not_confirmed', `the invalidation was applied, but the CDN did not confirm it: ${detail}`);
  }
}
