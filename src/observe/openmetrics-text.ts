// The registry printed in the OpenMetrics text format (OpenMetrics 1.0), for a scraper that asks for
// it: only OpenMetrics carries exemplars, the `trace_id` of a traced request's duration (spec §6.4).
// prom-client can print OpenMetrics only from a registry created for it, and while printing it renames
// every counter it holds (it strips `_total` from the metric's own name); the node's one registry
// serves the Prometheus format to everything else (the dashboard reads it too), so the same samples
// are printed here instead, from the registry's JSON view (prom-client's collect and get, unchanged).
import type { Registry } from 'prom-client';

export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];
type Sample = MetricJson['values'][number];

interface Exemplar {
  labelSet: Record<string, string | number>;
  value: number;
  timestamp?: number;
}

/** True when the Accept header lists OpenMetrics with a non-zero quality (Prometheus lists it first). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'application/openmetrics-text') return false;
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}

export async function openMetricsText(registry: Pick<Registry, 'getMetricsAsJSON'>): Promise<string> {
  const lines: string[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    const type = String(metric.type);
    // A counter's family is named without `_total`; its samples keep it (OpenMetrics §4.1 Counter).
    const family = type === 'counter' ? metric.name.replace(/_total$/, '') : metric.name;
    lines.push(`# TYPE ${family} ${type}`, `# HELP ${family} ${escapeText(metric.help)}`);
    for (const sample of metric.values) lines.push(sampleLine(metric, type, family, sample));
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

function sampleLine(metric: MetricJson, type: string, family: string, sample: Sample): string {
  const fallbackName = type === 'counter' ? `${family}_total` : metric.name;
  const name = 'metricName' in sample && typeof sample.metricName === 'string' ? sample.metricName : fallbackName;
  let line = `${name}${labelSet(sample.labels)} ${number(sample.value)}`;
  const exemplar = 'exemplar' in sample ? sample.exemplar : undefined;
  if (isExemplar(exemplar)) {
    line += ` # ${labelSet(exemplar.labelSet)} ${number(exemplar.value)}`;
    if (exemplar.timestamp !== undefined) line += ` ${exemplar.timestamp}`;
  }
  return line;
}

function isExemplar(value: unknown): value is Exemplar {
  return typeof value === 'object' && value !== null && 'labelSet' in value && 'value' in value && typeof value.value === 'number';
}

function labelSet(labels: Partial<Record<string, string | number>>): string {
  const pairs: string[] = [];
  for (const name in labels) {
    const value = labels[name];
    if (value !== undefined) pairs.push(`${name}="${escapeLabelValue(String(value))}"`);
  }
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function escapeText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(text: string): string {
  return escapeText(text).replace(/"/g, '\\"');
}
