// The OpenTelemetry SDK behind a node's RequestTracer, built from its `tracing` block: a tracer
// provider with svc's sampler, a bounded batch processor and svc's OTLP/HTTP (JSON) exporter. Nothing
// is registered globally (no global provider, propagator or context manager), so several nodes in
// one process each have their own, and a reload can build a new one and shut the old one down.
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Registry } from 'prom-client';
import { buildInfo } from '../../version/build-info.js';
import { droppedSpansMeterProvider, spansDroppedCounter } from './dropped-spans.js';
import { beginRequestTrace, type TraceTools } from './otel-request-trace.js';
import { OtlpHttpSpanExporter } from './otlp-http-exporter.js';
import { RequestSampler } from './request-sampler.js';
import { RequestTraceIds } from './trace-ids.js';
import type { RequestTracer } from './request-trace.js';

export interface OtelTracerOptions {
  /** `http://host:port/v1/traces`. */
  url: string;
  serviceName: string;
  samplingRate: number;
  /** The cluster node name, as `service.instance.id`; absent for a single node. */
  instanceId?: string | undefined;
  registry: Registry;
  /** Export batching; the defaults below suit production, tests shorten the delay. */
  batch?: Partial<BatchLimits>;
}

export interface BatchLimits {
  /** 2048 (OpenTelemetry's default): about a tenth of a second of a busy node's spans at rate 1. */
  maxQueueSize: number;
  /** 512 (OpenTelemetry's default): one export request stays well under collectors' body limits. */
  maxExportBatchSize: number;
  /** 1 s: spans show up in the backend while the operator is still looking (OpenTelemetry's is 5 s). */
  scheduledDelayMs: number;
  /** 10 s: a collector that does not answer costs spans (counted), never more than this per batch. */
  exportTimeoutMs: number;
}

const DEFAULT_BATCH: BatchLimits = { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMs: 1_000, exportTimeoutMs: 10_000 };

/** How long shutdown waits for the last export: a stopping node must not hang on a dead collector. */
const SHUTDOWN_WAIT_MS = 2_000;

export function createOtelTracer(options: OtelTracerOptions): RequestTracer {
  const batch = { ...DEFAULT_BATCH, ...options.batch };
  const exporter = new OtlpHttpSpanExporter({ url: options.url, timeoutMs: batch.exportTimeoutMs, userAgent: `svc/${buildInfo().version}` });
  const processor = new BatchSpanProcessor({
    exporter,
    maxQueueSize: batch.maxQueueSize,
    maxExportBatchSize: batch.maxExportBatchSize,
    scheduledDelayMillis: batch.scheduledDelayMs,
    exportTimeoutMillis: batch.exportTimeoutMs,
    selfObsMeterProvider: droppedSpansMeterProvider(spansDroppedCounter(options.registry)),
  });
  const sampler = new RequestSampler(options.samplingRate);
  const ids = new RequestTraceIds();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName,
      [ATTR_SERVICE_VERSION]: buildInfo().version,
      ...(options.instanceId !== undefined ? { 'service.instance.id': options.instanceId } : {}),
    }),
    sampler: sampler.sdkSampler,
    idGenerator: ids,
    spanProcessors: [processor],
  });
  const tools: TraceTools = { tracer: provider.getTracer('svc', buildInfo().version), propagator: new W3CTraceContextPropagator(), sampler, ids };
  return {
    enabled: true,
    begin: (request) => beginRequestTrace(tools, request),
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS).unref()));
      await Promise.race([provider.shutdown().catch(() => undefined), waited]);
      clearTimeout(timer);
      // Whatever is still under way (a collector that does not answer) is abandoned, counted dropped.
      await exporter.destroy();
    },
  };
}
