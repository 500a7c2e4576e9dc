// One client request as the data plane follows it: where it was routed, what the cache did and where
// the bytes came from. When the response is done (or the client went away) the exchange is counted
// once in the metrics and offered once to the access log; when tracing is on, its spans follow the
// same lifecycle (begun with the exchange, the cache span from routing, all ended with the answer).
// Most answers (every hit) end before their handler returns, so the exchange is settled then; only an
// answer still streaming waits for its 'close' event. A listener per response measured several µs of
// CPU per hit.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { AccessLog } from '../observe/access-log.js';
import type { Logger } from '../observe/logger.js';
import type { CacheResult, NodeMetrics, Source } from '../observe/metrics.js';
import type { InFlightRequests } from './in-flight.js';
import type { EdgeRequest } from '../edge/client-request.js';
import type { RejectionLog } from '../edge/rejections.js';
import type { Forwarding } from '../fill/forward-headers.js';
import type { RequestTrace, RequestTracer } from '../observe/tracing/request-trace.js';
import { tlsFieldsOf, type TlsFields } from '../tls/tls-fields.js';
import { hostOf, protocolOf, responseGone, type IncomingRequest, type OutgoingResponse } from '../http/server-messages.js';
import { connectionOf, remoteOf } from '../edge/client-connection.js';

export interface ExchangeDeps {
  metrics: NodeMetrics;
  accessLog: AccessLog;
  inFlight: InFlightRequests;
  /** Where svc's own error answers are explained, under the request id the client was shown. */
  logger: Logger;
  /** Where refused requests are logged once and counted. */
  rejections: RejectionLog;
  /** `limits.body_idle_timeout`: longest wait for the next byte of a request body being read. */
  bodyIdleTimeoutMs: number;
  /** The node's tracing (`tracing.*`, set up at startup); its `enabled` is the hot path's one check. */
  tracer: RequestTracer;
}

export class Exchange {
  routeLabel = '_default';
  cacheResult: CacheResult = 'BYPASS';
  source: Source = 'origin';
  /** Body bytes handed to the client's socket, counted by the response writers. */
  bytesOut = 0;
  /** The request in validated parts; set by the data plane before any handler sees the exchange. */
  edge!: EdgeRequest;
  /** What the origin is told about the request; set with `edge`, once the route is known. */
  forwarding!: Forwarding;
  /**
   * Set when another thread of the node handed this request over (home-routing.ts): this thread
   * answers it as the key's home, and logs it with the client's connection, protocol and TLS, given here.
   */
  handedFrom: { remote: string; proto: string; tls: TlsFields | undefined } | undefined;
  /** This thread handed the request to the key's home thread, which counts and logs it. */
  private counted = true;
  /** This request's spans; undefined when tracing is off (the only check an untraced request makes). */
  readonly trace: RequestTrace | undefined;
  /**
   * performance.now() at the start: a double, where hrtime.bigint() allocated two BigInts per request.
   * `performance` comes from node:perf_hooks: the global one is a getter (see eslint.config.js).
   */
  private readonly startMs = performance.now();
  private finished = false;
  /** Settles when what the answer counts as is known, for an answer whose end decides it (a fill). */
  private decided: Promise<void> | undefined;
  private id: string | undefined;
  /** The client's socket, kept for the access log: `request.socket` is null once a request body
   * forwarded to the origin has been consumed and the connection detached, and an HTTP/2 request's
   * forgets it once its stream closes. */
  private readonly socket: ReturnType<typeof connectionOf>;

  constructor(
    readonly request: IncomingRequest,
    readonly response: OutgoingResponse,
    readonly deps: ExchangeDeps,
  ) {
    this.socket = connectionOf(request);
    this.trace = deps.tracer.enabled ? deps.tracer.begin(request) : undefined;
    deps.inFlight.begin();
  }

  /** Names this exchange in an error answer and in the log line that explains it; made on first use. */
  get requestId(): string {
    this.id ??= randomUUID();
    return this.id;
  }

  /** The request matched a route: what follows is the cache's work (the `svc.cache` span). */
  routed(routeLabel: string): void {
    this.routeLabel = routeLabel;
    this.trace?.routed(routeLabel, this.edge.key);
  }

  /** Called once the request's handler is done: counts the exchange now, or when its answer ends. */
  settle(): void {
    if (this.response.writableEnded || responseGone(this.response)) this.finish();
    else this.response.once('close', () => this.finish());
  }

  /** Whether another thread handed this request over to be answered here. */
  get handedOver(): boolean {
    return this.handedFrom !== undefined;
  }

  /** The request went to its key's home thread, which counts and traces it (metrics, access log, spans) as the client's. */
  handedToHome(): void {
    this.counted = false;
  }

  /** Records what the cache did; the last call before the response is sent wins. */
  served(cacheResult: CacheResult, source: Source): void {
    this.cacheResult = cacheResult;
    this.source = source;
  }

  /**
   * The answer's count is decided when `decided` settles (the fill it streams from has ended, and
   * calls `served` with the final result): the exchange is counted then, if its response ended first.
   */
  countWhen(decided: Promise<void>): void {
    this.decided = decided;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.deps.inFlight.end();
    const durationMs = performance.now() - this.startMs;
    const bytesOut = this.bytesOut;
    if (this.decided) void this.decided.then(() => this.count(durationMs, bytesOut));
    else this.count(durationMs, bytesOut);
  }

  private count(durationMs: number, bytesOut: number): void {
    const { request, response } = this;
    const method = request.method ?? 'GET';
    const status = response.statusCode;
    const trace = this.trace;
    if (!this.counted) {
      trace?.abandon();
      return;
    }
    trace?.answered(status, this.cacheResult, this.source);
    this.deps.metrics.observeRequest({
      method,
      status,
      cacheResult: this.cacheResult,
      source: this.source,
      route: this.routeLabel,
      durationSeconds: durationMs / 1e3,
      bytesOut,
      traceId: trace?.sampledTraceId,
    });
    if (this.deps.accessLog.sampled(status)) this.log(method, status, bytesOut, durationMs);
    trace?.end();
  }

  private log(method: string, status: number, bytesOut: number, durationMs: number): void {
    const { request } = this;
    const socket = this.socket;
    this.deps.accessLog.record({
      method,
      host: hostOf(request) ?? '',
      path: request.url ?? '',
      proto: this.handedFrom?.proto ?? protocolOf(request),
      status,
      bytes_out: bytesOut,
      dur_ms: Math.round(durationMs),
      cache_status: this.cacheResult,
      route: this.routeLabel,
      remote: this.handedFrom?.remote ?? remoteOf(socket),
      ...(this.handedFrom === undefined ? tlsFieldsOf(socket) : this.handedFrom.tls),
    });
  }
}
