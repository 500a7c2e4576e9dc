// What one call to an HTTP API (a CDN's, a trace collector's) came to, in the classes the retry rules
// of spec §6.3 tell apart. Messages are built by svc from the status, the API's own error text and the
// network error's code, and are scrubbed of the token (src/cdn/cloudflare-client.ts), so they may be
// logged and shown as `last_error`.

export type CallResult =
  | { outcome: 'ok' }
  /** 429: retried, after Retry-After when the CDN sent one. */
  | { outcome: 'rate_limited'; retryAfterMs: number | undefined; message: string }
  /** 5xx: retried. */
  | { outcome: 'server_error'; status: number; message: string }
  /** No answer: refused connection, reset, timeout. Retried. */
  | { outcome: 'network_error'; message: string }
  /** Any other 4xx (or a 2xx whose body says it failed): the CDN will not take this request. Not retried. */
  | { outcome: 'refused'; status: number; message: string }
  /** The node is stopping: the call was abandoned, its purges stay pending. */
  | { outcome: 'aborted' };

export type FailedCall = Exclude<CallResult, { outcome: 'ok' } | { outcome: 'aborted' }>;
