// What the data plane sees of tracing (spec §6.4). With tracing off the node holds TRACING_OFF: a
// request checks `enabled` once and carries no trace, so no span object is made, no header is read
// for it and the OpenTelemetry SDK is never loaded (create-tracer.ts imports it only when asked).
import type { IncomingRequest } from '../../http/server-messages.js';
import type { CacheResult, Source } from '../traffic-metrics.js';

/** Something whose end an origin span waits for: the origin's body stream. */
export interface ClosingStream {
  once(event: 'end' | 'close', listener: () => void): unknown;
}

/** A request svc sends on a client's behalf: `svc.origin` or `svc.peer_fetch`. */
export interface OutgoingSpan {
  /**
   * The other side answered. The span ends when `body` has been read to its end, or closed early
   * (an origin's body is read after its head arrived), or now when there is no body to wait for.
   */
  answered(status: number, details?: { upstream?: string; body?: ClosingStream }): void;
  /** The request failed: the span ends with an error status. */
  failed(error: unknown): void;
}

/** An origin request's head, which `origin()` adds `traceparent` and `tracestate` to. */
export interface OriginRequestHead {
  method: string;
  path: string;
  pool: string;
  headers: Record<string, string | string[]>;
}

/** One client request's spans: `svc.listener.http` > `svc.pipeline` > `svc.cache`. */
export interface RequestTrace {
  /** The trace id when the request is sampled (the exemplar of its duration), else undefined. */
  readonly sampledTraceId: string | undefined;
  /** The request matched a route: the cache state machine's span begins; `key` is its cache key. */
  routed(route: string, key: string): void;
  /** An upstream fetch for this request begins (miss, revalidation, pass-through). */
  origin(head: OriginRequestHead): OutgoingSpan;
  /**
   * A peer fetch to `owner` begins; `fields` is the flat list (name, value…) sent to the owner, which
   * gets this trace's `traceparent` and `tracestate` in place of any the client sent.
   */
  peerFetch(owner: string, fields: string[]): OutgoingSpan;
  /** The response ended (its last byte written, or the client gone): the cache span ends. */
  answered(status: number, cacheResult: CacheResult, source: Source): void;
  /** Metrics and access log are done: the pipeline and listener spans end. */
  end(): void;
  /**
   * The request was handed to another thread of the node, which traces it (continuing the same
   * incoming trace): nothing of this trace is exported.
   */
  abandon(): void;
}

/** A node's tracing, built from its `tracing` block at startup (a reload refuses to change it). */
export interface RequestTracer {
  readonly enabled: boolean;
  /** Only called when `enabled`. */
  begin(request: IncomingRequest): RequestTrace;
  /** Exports what is queued (bounded in time) and stops. */
  shutdown(): Promise<void>;
}

/** Tracing off (empty `tracing.endpoint`). */
export const TRACING_OFF: RequestTracer = {
  enabled: false,
  begin() {
    throw new Error('TRACING_OFF.begin: a request checks `enabled` before it begins a trace');
  },
  shutdown: () => Promise.resolve(),
};
