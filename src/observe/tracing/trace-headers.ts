// W3C Trace Context (`traceparent`, `tracestate`) written into the requests svc sends on a client's
// behalf (spec §4.3). Whatever the client sent under those names is replaced: the origin or peer
// must see svc's span as the parent, not the client's.
import { defaultTextMapSetter, type Context } from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';

const TRACE_FIELDS = ['traceparent', 'tracestate'];

/** Into an origin request's header object (lower-case names, as svc builds it). */
export function injectIntoHeaders(propagator: W3CTraceContextPropagator, context: Context, headers: Record<string, string | string[]>): void {
  for (const name of TRACE_FIELDS) delete headers[name];
  propagator.inject(context, headers, defaultTextMapSetter);
}

/** Into a flat field list (name, value…, lower-case names), as a peer fetch carries it. */
export function injectIntoFields(propagator: W3CTraceContextPropagator, context: Context, fields: string[]): void {
  for (let i = fields.length - 2; i >= 0; i -= 2) if (TRACE_FIELDS.includes(fields[i]!)) fields.splice(i, 2);
  const injected: Record<string, string> = {};
  propagator.inject(context, injected, defaultTextMapSetter);
  for (const name in injected) fields.push(name, injected[name]!);
}
