// One client request's spans (spec §6.4): `svc.listener.http` > `svc.pipeline` > `svc.cache`, and
// `svc.origin` or `svc.peer_fetch` under the cache span for what it fetched. Parents are passed
// explicitly (no context manager, no AsyncLocalStorage): the data plane hands each request's trace
// along with the request itself.
//
// The sampling decision comes first (request-sampler.ts), so a request left out makes no span object
// at all; only if it fetches from the origin or a peer does it make the trace id (when it came without
// one) and the span id that request's traceparent names.
import {
  defaultTextMapGetter,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { IncomingRequest } from '../../http/server-messages.js';
import { ATTR, cacheKeyHash, pathWithoutQuery } from './span-attributes.js';
import { injectIntoFields, injectIntoHeaders } from './trace-headers.js';
import type { RequestTraceIds } from './trace-ids.js';
import type { RequestSampler } from './request-sampler.js';
import type { CacheResult, Source } from '../traffic-metrics.js';
import type { ClosingStream, OriginRequestHead, OutgoingSpan, RequestTrace } from './request-trace.js';

export interface TraceTools {
  tracer: Tracer;
  propagator: W3CTraceContextPropagator;
  /** Asked once per request, before any span is made. */
  sampler: RequestSampler;
  /** The tracer's id generator. */
  ids: RequestTraceIds;
}

/** The span of a request svc sends: ends when the answer's body is done, or on failure. */
class TracedOutgoingSpan implements OutgoingSpan {
  constructor(private readonly span: Span) {}

  answered(status: number, details?: { upstream?: string; body?: ClosingStream }): void {
    const { span } = this;
    span.setAttribute(ATTR.status, status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (details?.upstream !== undefined) {
      const upstream = new URL(details.upstream);
      span.setAttribute(ATTR.serverAddress, upstream.hostname);
      span.setAttribute(ATTR.serverPort, Number(upstream.port || (upstream.protocol === 'https:' ? 443 : 80)));
    }
    if (!details?.body) {
      span.end();
      return;
    }
    // 'end' when the body was read whole (before the client's response can end), 'close' when it
    // was cut or dropped first.
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      span.end();
    };
    details.body.once('end', end);
    details.body.once('close', end);
  }

  failed(error: unknown): void {
    const code = (error as { code?: unknown } | null)?.code;
    // The error's code only: a message may name internals a trace backend's readers need not see.
    this.span.setAttribute(ATTR.errorType, typeof code === 'string' ? code : 'error');
    this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

/** For requests the sampler left out: nothing is recorded, only the trace context is passed on. */
const UNRECORDED: OutgoingSpan = { answered: () => undefined, failed: () => undefined };

/** A sampled request: every span is recorded and exported. */
class SampledRequestTrace implements RequestTrace {
  readonly sampledTraceId: string;
  private readonly pipeline: Span;
  private readonly pipelineContext: Context;
  private cache: Span | undefined;
  private cacheContext: Context | undefined;
  /** Spans are exported when they end: an abandoned trace ends none. */
  private abandoned = false;

  constructor(
    private readonly tools: TraceTools,
    private readonly listener: Span,
    listenerContext: Context,
  ) {
    this.sampledTraceId = listener.spanContext().traceId;
    this.pipeline = tools.tracer.startSpan('svc.pipeline', undefined, listenerContext);
    this.pipelineContext = trace.setSpan(listenerContext, this.pipeline);
  }

  routed(route: string, key: string): void {
    this.listener.setAttribute(ATTR.route, route);
    this.pipeline.setAttribute(ATTR.route, route);
    this.cache = this.tools.tracer.startSpan(
      'svc.cache',
      { attributes: { [ATTR.route]: route, [ATTR.keyHash]: cacheKeyHash(key) } },
      this.pipelineContext,
    );
    this.cacheContext = trace.setSpan(this.pipelineContext, this.cache);
  }

  origin(head: OriginRequestHead): OutgoingSpan {
    const parent = this.cacheContext ?? this.pipelineContext;
    const span = this.tools.tracer.startSpan(
      'svc.origin',
      { kind: SpanKind.CLIENT, attributes: { [ATTR.method]: head.method, [ATTR.path]: pathWithoutQuery(head.path), [ATTR.pool]: head.pool } },
      parent,
    );
    injectIntoHeaders(this.tools.propagator, trace.setSpan(parent, span), head.headers);
    return new TracedOutgoingSpan(span);
  }

  peerFetch(owner: string, fields: string[]): OutgoingSpan {
    const parent = this.cacheContext ?? this.pipelineContext;
    const span = this.tools.tracer.startSpan('svc.peer_fetch', { kind: SpanKind.CLIENT, attributes: { [ATTR.peer]: owner } }, parent);
    injectIntoFields(this.tools.propagator, trace.setSpan(parent, span), fields);
    return new TracedOutgoingSpan(span);
  }

  answered(status: number, cacheResult: CacheResult, source: Source): void {
    if (this.abandoned) return;
    for (const span of [this.listener, this.cache]) {
      if (!span) continue;
      span.setAttribute(ATTR.status, status);
      span.setAttribute(ATTR.cacheResult, cacheResult);
      span.setAttribute(ATTR.source, source);
    }
    if (status >= 500) this.listener.setStatus({ code: SpanStatusCode.ERROR });
    this.cache?.end();
  }

  end(): void {
    if (this.abandoned) return;
    this.pipeline.end();
    this.listener.end();
  }

  abandon(): void {
    this.abandoned = true;
  }
}

/** A request the sampler left out: no span is made; its trace context still reaches the origin. */
class UnsampledRequestTrace implements RequestTrace {
  readonly sampledTraceId = undefined;
  /** The incoming trace's id, or one made when an outgoing request first needs it. */
  private traceId: string | undefined;

  constructor(
    private readonly tools: TraceTools,
    private readonly parent: SpanContext | undefined,
  ) {
    this.traceId = parent?.traceId;
  }
  routed(): void {}
  origin(head: OriginRequestHead): OutgoingSpan {
    injectIntoHeaders(this.tools.propagator, this.outgoingContext(), head.headers);
    return UNRECORDED;
  }
  peerFetch(_owner: string, fields: string[]): OutgoingSpan {
    injectIntoFields(this.tools.propagator, this.outgoingContext(), fields);
    return UNRECORDED;
  }
  answered(): void {}
  end(): void {}
  abandon(): void {}

  /** The context an outgoing request carries: this trace, a span id of svc's, not sampled. */
  private outgoingContext(): Context {
    this.traceId ??= this.tools.sampler.newTraceId(false);
    const spanContext: SpanContext = { traceId: this.traceId, spanId: this.tools.ids.generateSpanId(), traceFlags: TraceFlags.NONE };
    if (this.parent?.traceState) spanContext.traceState = this.parent.traceState;
    return trace.setSpanContext(ROOT_CONTEXT, spanContext);
  }
}

/** Starts a request's trace, continuing the trace of an incoming `traceparent`. */
export function beginRequestTrace(tools: TraceTools, request: IncomingRequest): RequestTrace {
  const { sampler } = tools;
  let incoming = ROOT_CONTEXT;
  let parent: SpanContext | undefined;
  if (request.headers.traceparent !== undefined) {
    incoming = tools.propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const remote = trace.getSpanContext(incoming);
    if (remote !== undefined && isSpanContextValid(remote)) parent = remote;
  }
  if (parent !== undefined ? !sampler.samples(parent.traceId, incoming) : !sampler.samplesNewTrace()) {
    return new UnsampledRequestTrace(tools, parent);
  }
  if (parent === undefined) tools.ids.useNext(sampler.newTraceId(true));
  const listener = tools.tracer.startSpan(
    'svc.listener.http',
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR.method]: request.method ?? 'GET',
        [ATTR.path]: pathWithoutQuery(request.url ?? '/'),
        'network.protocol.version': request.httpVersion,
      },
    },
    incoming,
  );
  return new SampledRequestTrace(tools, listener, trace.setSpan(incoming, listener));
}
