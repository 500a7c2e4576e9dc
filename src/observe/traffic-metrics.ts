// The three traffic metrics of spec §6.5, counted on the request hot path. prom-client hashes the
// label set on every inc() and observe(), which measured about 16 µs of CPU per request in svc
// (a quarter of a cache hit's whole cost); so each request only bumps plain numbers in its label
// set's series here, and the series become prom-client metrics when /metrics is scraped. A sampled
// request (tracing on) also leaves its trace id as the exemplar of its duration bucket; an untraced
// one pays a single comparison for that.
import { Counter, Histogram, type Registry } from 'prom-client';

export type CacheResult = 'HIT' | 'MISS' | 'STALE' | 'BYPASS' | 'REVALIDATED';
export type Source = 'hot' | 'warm' | 'peer' | 'origin';

export interface RequestObservation {
  method: string;
  status: number;
  cacheResult: CacheResult;
  source: Source;
  route: string;
  durationSeconds: number;
  bytesOut: number;
  /** The request's trace id when tracing sampled it: the exemplar of its duration (spec §6.4). */
  traceId: string | undefined;
}

/**
 * Request-duration buckets in seconds. prom-client has no native (sparse) histograms, so the spec's
 * "native buckets" are approximated by classic buckets spaced for a cache: sub-millisecond hits up
 * to multi-second origin fetches.
 */
export const DURATION_BUCKETS_SECONDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
] as const;

/** An OpenMetrics exemplar, in the shape prom-client prints (`# {trace_id="…"} value timestamp`). */
interface Exemplar {
  labelSet: { trace_id: string };
  value: number;
  /** Seconds since the epoch. */
  timestamp: number;
}

interface Series {
  labels: { method: string; status: string; cache_result: string; source: string; route: string };
  /** The status as observed, so that finding the series again needs no string. */
  statusCode: number;
  requests: number;
  bytes: number;
  durationSum: number;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: Float64Array;
  /** The latest sampled observation of each bucket; made with the first one. */
  exemplars: (Exemplar | undefined)[] | undefined;
}

/** A sample as prom-client's get() returns it (its own type is not exported). */
type MetricValue = Awaited<ReturnType<Histogram['get']>>['values'][number];

/**
 * prom-client metrics whose samples are the series' plain numbers, read when scraped: prom-client
 * still names, types and prints them (both exposition formats, exemplars in OpenMetrics), but never
 * hashes a label set per request.
 */
class SeriesCounter extends Counter {
  constructor(
    config: { name: string; help: string; registers: Registry[] },
    private readonly samples: () => MetricValue[],
  ) {
    super(config);
  }
  override async get(): ReturnType<Counter['get']> {
    const metric = await super.get();
    metric.values = this.samples();
    return metric;
  }
}

class SeriesHistogram extends Histogram {
  /** prom-client's own description of an empty histogram of this name, which get() fills. */
  private readonly shape: ReturnType<Histogram['get']>;

  constructor(
    config: { name: string; help: string; registers: Registry[] },
    private readonly samples: () => MetricValue[],
  ) {
    super(config);
    this.shape = new Histogram({ name: config.name, help: config.help, registers: [] }).get();
  }
  override async get(): ReturnType<Histogram['get']> {
    return { ...(await this.shape), values: this.samples() };
  }
  /**
   * prom-client's text printer reads a histogram through this method (its bucket labels kept apart),
   * not get(); it is not in prom-client's types, so it is declared here rather than overridden.
   */
  getForPromString(): ReturnType<Histogram['get']> {
    return this.get();
  }
}

const CACHE_RESULTS: readonly CacheResult[] = ['HIT', 'MISS', 'STALE', 'BYPASS', 'REVALIDATED'];
const SOURCES: readonly Source[] = ['hot', 'warm', 'peer', 'origin'];

/** Series of one route, method and status, by cache result and source: found without a key string. */
type SeriesSlots = (Series | undefined)[];

export class TrafficMetrics {
  private readonly series: Series[] = [];
  /** route → method → status → slots. */
  private readonly index = new Map<string, Map<string, Map<number, SeriesSlots>>>();

  /** The series the previous request went to: under load, consecutive requests mostly share labels. */
  private last: Series | undefined;

  observe(o: RequestObservation): void {
    let series = this.last;
    if (series === undefined || !isSeriesOf(series, o)) {
      series = this.seriesOf(o);
      this.last = series;
    }
    series.requests++;
    series.bytes += o.bytesOut;
    series.durationSum += o.durationSeconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS_SECONDS.length && o.durationSeconds > DURATION_BUCKETS_SECONDS[bucket]!) bucket++;
    series.buckets[bucket]!++;
    if (o.traceId !== undefined) {
      series.exemplars ??= new Array<Exemplar | undefined>(DURATION_BUCKETS_SECONDS.length + 1);
      series.exemplars[bucket] = { labelSet: { trace_id: o.traceId }, value: o.durationSeconds, timestamp: Date.now() / 1000 };
    }
  }

  private seriesOf(o: RequestObservation): Series {
    let byMethod = this.index.get(o.route);
    if (!byMethod) this.index.set(o.route, (byMethod = new Map()));
    let byStatus = byMethod.get(o.method);
    if (!byStatus) byMethod.set(o.method, (byStatus = new Map()));
    let slots = byStatus.get(o.status);
    if (!slots) byStatus.set(o.status, (slots = []));
    const slot = CACHE_RESULTS.indexOf(o.cacheResult) * SOURCES.length + SOURCES.indexOf(o.source);
    let series = slots[slot];
    if (!series) {
      series = {
        labels: { method: o.method, status: String(o.status), cache_result: o.cacheResult, source: o.source, route: o.route },
        statusCode: o.status,
        requests: 0,
        bytes: 0,
        durationSum: 0,
        buckets: new Float64Array(DURATION_BUCKETS_SECONDS.length + 1),
        exemplars: undefined,
      };
      slots[slot] = series;
      this.series.push(series);
    }
    return series;
  }

  register(registry: Registry): void {
    const registers = [registry];
    const all = (): Series[] => this.series;
    new SeriesCounter(
      { name: 'svc_requests_total', help: 'Data-plane requests answered, by method, status, cache result, source and route.', registers },
      () => all().map((s) => ({ value: s.requests, labels: s.labels })),
    );
    new SeriesHistogram(
      { name: 'svc_request_duration_seconds', help: 'Time from request arrival to the last byte of the response.', registers },
      () => all().flatMap((s) => histogramValues('svc_request_duration_seconds', s)),
    );
    new SeriesCounter({ name: 'svc_response_bytes_total', help: 'Response body bytes sent to clients.', registers }, () => bytesByPrintedLabels(all()));
  }
}

/**
 * `svc_response_bytes_total` has no `status` label (spec §6.5), but its bytes are kept in the series of
 * each status: the series that differ only in status are added up, so that no two samples share a label
 * set (Prometheus rejects such a scrape). Done per scrape, off the request path.
 */
function bytesByPrintedLabels(series: readonly Series[]): MetricValue[] {
  const merged = new Map<string, MetricValue>();
  for (const s of series) {
    const { method, cache_result, source, route } = s.labels;
    // No method, cache result or source holds a NUL and the route comes last: one key per label set.
    const key = `${method}\0${cache_result}\0${source}\0${route}`;
    const sample = merged.get(key);
    if (sample === undefined) merged.set(key, { value: s.bytes, labels: { method, cache_result, source, route } });
    else sample.value += s.bytes;
  }
  return [...merged.values()];
}

function isSeriesOf(series: Series, o: RequestObservation): boolean {
  const { labels } = series;
  return (
    series.statusCode === o.status &&
    labels.cache_result === o.cacheResult &&
    labels.source === o.source &&
    labels.route === o.route &&
    labels.method === o.method
  );
}

/** prom-client's sample with the exemplar it prints after it in OpenMetrics (not in its types). */
function bucketSample(name: string, le: number | string, cumulative: number, series: Series, exemplar: Exemplar | undefined): MetricValue {
  const sample = { metricName: `${name}_bucket`, value: cumulative, labels: { le, ...series.labels }, exemplar };
  return sample;
}

function histogramValues(name: string, series: Series): MetricValue[] {
  const values: MetricValue[] = [];
  let cumulative = 0;
  DURATION_BUCKETS_SECONDS.forEach((le, i) => {
    cumulative += series.buckets[i]!;
    values.push(bucketSample(name, le, cumulative, series, series.exemplars?.[i]));
  });
  cumulative += series.buckets[DURATION_BUCKETS_SECONDS.length]!;
  values.push(bucketSample(name, '+Inf', cumulative, series, series.exemplars?.[DURATION_BUCKETS_SECONDS.length]));
  values.push({ metricName: `${name}_sum`, value: series.durationSum, labels: series.labels });
  values.push({ metricName: `${name}_count`, value: cumulative, labels: series.labels });
  return values;
}
