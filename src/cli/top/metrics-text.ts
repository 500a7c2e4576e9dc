// Reading a node's `/metrics` (the Prometheus text format, version 0.0.4) for `svc top`: samples
// with their labels, sums over label sets, and quantiles from histogram buckets the way Prometheus's
// histogram_quantile computes them (linear interpolation inside the bucket that holds the rank).

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** `name{a="x",b="y"} value [timestamp]`; label values may hold escaped `\\`, `\"` and `\n`. */
const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** Every sample of an exposition; comments and lines that are not samples are skipped. */
export function parseMetricsText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) labels[label[1]!] = unescape(label[2]!);
    samples.push({ name: match[1]!, labels, value: parseValue(match[3]!) });
  }
  return samples;
}

/** The sum of a metric's samples, per value of one label (all samples when `by` is undefined, key ''). */
export function sumBy(samples: readonly Sample[], name: string, by?: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const sample of samples) {
    if (sample.name !== name) continue;
    const key = by === undefined ? '' : (sample.labels[by] ?? '');
    sums.set(key, (sums.get(key) ?? 0) + sample.value);
  }
  return sums;
}

/** The value of a metric without labels (or the sum of its series); undefined when absent. */
export function valueOf(samples: readonly Sample[], name: string): number | undefined {
  return sumBy(samples, name).get('');
}

/** Cumulative counts per upper bound (`le`), summed over every series of a histogram. */
export function histogramBuckets(samples: readonly Sample[], histogram: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const sample of samples) {
    if (sample.name !== `${histogram}_bucket` || sample.labels.le === undefined) continue;
    const le = parseValue(sample.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + sample.value);
  }
  return buckets;
}

/**
 * The q-quantile (0..1) of cumulative buckets, as Prometheus's histogram_quantile: the bucket holding
 * rank q·count is found and the value interpolated linearly inside it (from 0 for the first bucket);
 * a rank in the +Inf bucket answers the highest finite bound. Undefined when there is no observation.
 */
export function histogramQuantile(q: number, buckets: ReadonlyMap<number, number>): number | undefined {
  const sorted = [...buckets.entries()].sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [bound, count] of sorted) {
    if (count >= rank) {
      if (bound === Infinity) return lowerBound;
      const inBucket = count - lowerCount;
      return inBucket === 0 ? bound : lowerBound + (bound - lowerBound) * ((rank - lowerCount) / inBucket);
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound;
}

/** What was observed between two readings of cumulative buckets (a counter reset counts from zero). */
export function bucketDelta(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): Map<number, number> {
  const delta = new Map<number, number>();
  for (const [le, count] of after) {
    const earlier = before.get(le) ?? 0;
    delta.set(le, count >= earlier ? count - earlier : count);
  }
  return delta;
}
