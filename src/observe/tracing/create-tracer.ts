// A node's tracing from its `tracing` block (spec §2.3, §6.4). An empty endpoint gives TRACING_OFF
// without loading the OpenTelemetry SDK: it is imported only here, and only when tracing is on.
import type { Registry } from 'prom-client';
import { otlpTracesUrl } from './otlp-endpoint.js';
import { TRACING_OFF, type RequestTracer } from './request-trace.js';
import type { BatchLimits } from './otel-tracer.js';

export interface TracingConfig {
  endpoint: string;
  service_name: string;
  sampling_rate: number;
}

export interface CreateTracerOptions {
  registry: Registry;
  instanceId?: string | undefined;
  /** Tests only: export batching (see BatchLimits). */
  batch?: Partial<BatchLimits>;
}

export async function createRequestTracer(config: TracingConfig, options: CreateTracerOptions): Promise<RequestTracer> {
  const url = otlpTracesUrl(config.endpoint);
  if (url === undefined) return TRACING_OFF;
  const { createOtelTracer } = await import('./otel-tracer.js');
  return createOtelTracer({ url, serviceName: config.service_name, samplingRate: config.sampling_rate, ...options });
}
