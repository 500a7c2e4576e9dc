// Spans that never reach the collector, counted (`svc_tracing_spans_dropped_total{reason}`): the
// export queue is bounded, so a collector that is down or slow costs spans, never requests. The
// count is the batch processor's own: it reports what it processed to a self-observability meter
// (OpenTelemetry's `otel.sdk.processor.span.processed`, with `error.type` on a drop), and this
// meter turns the drops into the Prometheus counter.
import { createNoopMeter, type MeterProvider } from '@opentelemetry/api';
import { Counter, type Registry } from 'prom-client';

export const SPANS_DROPPED_METRIC = 'svc_tracing_spans_dropped_total';

/** `queue_full`: the export queue was full when the span ended; `export_failed`: its batch failed. */
export type DropReason = 'queue_full' | 'export_failed';

const PROCESSED_INSTRUMENT = 'otel.sdk.processor.span.processed';
/** The batch processor's `error.type` for a span it had no room for. */
const QUEUE_FULL = 'queue_full';

/** The node's counter, made on first use: a tracer rebuilt on reload keeps counting on it. */
export function spansDroppedCounter(registry: Registry): Counter {
  const existing = registry.getSingleMetric(SPANS_DROPPED_METRIC);
  if (existing instanceof Counter) return existing;
  const counter = new Counter({
    name: SPANS_DROPPED_METRIC,
    help: 'Spans not exported: the export queue was full (queue_full) or their batch failed (export_failed).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['queue_full', 'export_failed'] satisfies DropReason[]) counter.inc({ reason }, 0);
  return counter;
}

/** The meter provider given to the batch span processor: only its drops are kept. */
export function droppedSpansMeterProvider(dropped: Counter): MeterProvider {
  const meter = createNoopMeter();
  const noopCounter = meter.createCounter.bind(meter);
  meter.createCounter = (name, options) => {
    if (name !== PROCESSED_INSTRUMENT) return noopCounter(name, options);
    return {
      add(count, attributes) {
        const errorType = attributes?.['error.type'];
        if (errorType === undefined) return;
        dropped.inc({ reason: errorType === QUEUE_FULL ? 'queue_full' : 'export_failed' }, count);
      },
    };
  };
  return { getMeter: () => meter };
}
