// One `/metrics` for a node whose data plane runs in several workers: the primary asks every worker
// for its registry's figures and adds them up with prom-client's cluster aggregation, so names,
// labels and types stay those of one process. Each metric says how it adds up (its `aggregator`):
// counters, histograms (bucket by bucket, `_sum` and `_count`) and svc's hand-made traffic series
// sum; a gauge of one worker's own state (its hot tier's bytes) sums to the node's; a gauge of
// something the workers share must say `max` or `first`, or it would count the shared thing once
// per worker. A worker that does not answer in time is left out of that scrape, not waited for.
import { AggregatorRegistry, type Registry } from 'prom-client';
import { OPENMETRICS_CONTENT_TYPE, openMetricsText } from '../../observe/openmetrics-text.js';
import type { MainChannel } from './main-channel.js';
import type { WorkerCalls } from './worker-calls.js';
import type { MetricFigures } from './thread-messages.js';

/** A scrape should not hang on a worker that is busy or stuck: it is left out of that one. */
const SCRAPE_TIMEOUT_MS = 2_000;

/**
 * What the primary alone says of the node: its startup phases and readiness, and its configuration
 * reloads (a reload reaches every worker, but is one reload). A worker's copy would count it again.
 */
const PRIMARY_OWNED = /^svc_(startup_|config_reloads_total$)/;

/**
 * prom-client's process figures (process_resident_memory_bytes, process_cpu_seconds_total,
 * process_open_fds…) are the whole process's: every thread reads the same ones, and their sum would
 * count the process once per thread (a 2-thread node said 3 GB resident for 1 GB, found by
 * bench/soak.ts). The first registry's stands for the node: the main thread's when it has one.
 */
const PROCESS_WIDE = /^process_/;

function oncePerProcess(figures: MetricFigures[][]): MetricFigures[][] {
  return figures.map((part) => part.map((metric) => (PROCESS_WIDE.test(metric.name) ? { ...metric, aggregator: 'first' } : metric)));
}

/** In a worker: answers the primary's metrics calls with `registry`'s figures, less what the primary owns. */
export function answerMetricsCalls(channel: MainChannel, registry: Registry): void {
  channel.handle('metrics', async () => (await registry.getMetricsAsJSON()).filter((metric) => !PRIMARY_OWNED.test(metric.name)));
}

export interface Exposition {
  contentType: string;
  body: string;
  /** Workers whose figures are missing from this scrape (they did not answer, or exited). */
  missingWorkers: number;
}

/** In the main thread: its own registry (if any) and every worker's, added up in one registry. */
export async function aggregatedRegistry(calls: WorkerCalls, own?: Registry): Promise<{ registry: Registry; figures: MetricFigures[][]; missingWorkers: number }> {
  const outcome = await calls.call('metrics', null, { onFailure: 'report', timeoutMs: SCRAPE_TIMEOUT_MS });
  const figures = own === undefined ? outcome.answers : [await own.getMetricsAsJSON(), ...outcome.answers];
  return { registry: AggregatorRegistry.aggregate(oncePerProcess(figures)), figures, missingWorkers: outcome.gone + outcome.failed.length };
}

/**
 * In the main thread: the text of `/metrics`, every worker's figures added up, in OpenMetrics when
 * the scraper asks for it, with the exemplars the workers recorded (the sum itself drops them).
 */
export async function aggregatedExposition(calls: WorkerCalls, own: Registry | undefined, openMetrics: boolean): Promise<Exposition> {
  const { registry, figures, missingWorkers } = await aggregatedRegistry(calls, own);
  if (!openMetrics) return { ...(await registryExposition(registry, false)), missingWorkers };
  const summed = withExemplars(await registry.getMetricsAsJSON(), figures);
  return { contentType: OPENMETRICS_CONTENT_TYPE, body: await openMetricsText({ getMetricsAsJSON: () => Promise.resolve(summed) }), missingWorkers };
}

/**
 * The summed figures with each sample's latest exemplar among the threads' (a bucket's exemplar is
 * one observation's trace id: the newest of any thread stands for the sum, as one process's would).
 */
function withExemplars(summed: MetricFigures[], parts: readonly MetricFigures[][]): MetricFigures[] {
  const latest = new Map<string, { timestamp?: number }>();
  for (const part of parts) {
    for (const metric of part) {
      for (const sample of metric.values) {
        const exemplar = (sample as { exemplar?: { timestamp?: number } }).exemplar;
        if (exemplar === undefined || exemplar === null) continue;
        const id = sampleId(metric.name, sample);
        const known = latest.get(id);
        if (known === undefined || (exemplar.timestamp ?? 0) >= (known.timestamp ?? 0)) latest.set(id, exemplar);
      }
    }
  }
  if (latest.size === 0) return summed;
  return summed.map((metric) => ({
    ...metric,
    values: metric.values.map((sample) => {
      const exemplar = latest.get(sampleId(metric.name, sample));
      return exemplar === undefined ? sample : { ...sample, exemplar };
    }),
  })) as MetricFigures[];
}

function sampleId(metric: string, sample: MetricFigures['values'][number]): string {
  const name = 'metricName' in sample ? String(sample.metricName) : '';
  const labels = Object.entries(sample.labels).sort(([a], [b]) => a.localeCompare(b));
  return `${metric}\u0000${name}\u0000${JSON.stringify(labels)}`;
}

/** One registry's text, in OpenMetrics when asked (the primary's own, before its workers are forked). */
export async function registryExposition(registry: Registry, openMetrics: boolean): Promise<Exposition> {
  if (openMetrics) return { contentType: OPENMETRICS_CONTENT_TYPE, body: await openMetricsText(registry), missingWorkers: 0 };
  return { contentType: registry.contentType, body: await registry.metrics(), missingWorkers: 0 };
}
