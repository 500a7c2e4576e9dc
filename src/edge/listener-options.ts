// What a listener facing the network is made with besides its handler: the limits a client's request
// is held to, and the body of the answers the listener makes itself. Shared by the HTTP/1.1 server
// (edge-server.ts) and the HTTP/2 sessions beside it (http2-sessions.ts).

export interface ListenerLimits {
  /**
   * Largest request header section, request line to its final CRLF, as received; 431 beyond. Over
   * HTTP/2, the largest header list (SETTINGS_MAX_HEADER_LIST_SIZE); the stream is reset beyond.
   */
  readonly maxHeaderBytes: number;
  /** Most field lines in a request's header section; 431 beyond (over HTTP/2 the stream is reset). */
  readonly maxHeaderFields: number;
  /** Time allowed for a request's header section to arrive; 408 after it. */
  readonly headerTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open. */
  readonly keepAliveTimeoutMs: number;
}

/** The body of an answer svc makes itself: generic, naming the status and the request id, no more. */
export type ErrorBody = (status: number, reason: string, requestId: string) => { contentType: string; body: string };
