// `GET /dashboard/api/summary`: the figures the Overview charts, read from the node's metrics
// registry (the same numbers `/metrics` prints) and added up across routes, methods and statuses.
// They are totals since boot; the browser turns two samples into rates, ratios and quantiles.
import type { Registry } from 'prom-client';

/** The label values of spec §6.5, always present (0 when unseen) so the charts keep their series. */
export const CACHE_RESULTS = ['HIT', 'MISS', 'STALE', 'REVALIDATED', 'BYPASS'] as const;
export const SOURCES = ['hot', 'warm', 'peer', 'origin'] as const;

export interface TierSummary {
  bytes: number;
  entries: number;
  max_bytes: number;
}

export interface MetricsSummary {
  requests: { total: number; by_cache_result: Record<string, number>; by_source: Record<string, number> };
  /** `svc_request_duration_seconds`: bucket bounds, and cumulative counts per bound then for +Inf. */
  duration: { bounds_s: number[]; cumulative: number[]; sum_s: number };
  tiers: { hot: TierSummary & { evictions: number }; warm: TierSummary | null };
}

export interface TierCapacities {
  hotMaxBytes: number;
  /** Undefined when the node has no warm tier. */
  warmMaxBytes: number | undefined;
}

interface Sample {
  value: number;
  labels: Record<string, string | number | undefined>;
  metricName?: string;
}

function zeroed(keys: readonly string[]): Record<string, number> {
  return Object.fromEntries(keys.map((key) => [key, 0]));
}

export async function summarizeMetrics(registry: Pick<Registry, 'getMetricsAsJSON'>, capacities: TierCapacities): Promise<MetricsSummary> {
  const metrics = new Map((await registry.getMetricsAsJSON()).map((metric) => [metric.name, metric.values as Sample[]]));
  const samples = (name: string): Sample[] => metrics.get(name) ?? [];
  const single = (name: string): number => samples(name).reduce((total, sample) => total + sample.value, 0);

  const byCacheResult = zeroed(CACHE_RESULTS);
  const bySource = zeroed(SOURCES);
  let total = 0;
  for (const { value, labels } of samples('svc_requests_total')) {
    total += value;
    const result = String(labels.cache_result);
    const source = String(labels.source);
    byCacheResult[result] = (byCacheResult[result] ?? 0) + value;
    bySource[source] = (bySource[source] ?? 0) + value;
  }

  const buckets = new Map<number, number>();
  let sum = 0;
  for (const sample of samples('svc_request_duration_seconds')) {
    if (sample.metricName?.endsWith('_sum')) sum += sample.value;
    if (!sample.metricName?.endsWith('_bucket')) continue;
    const le = sample.labels.le === '+Inf' ? Infinity : Number(sample.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + sample.value);
  }
  const bounds = [...buckets.keys()].sort((a, b) => a - b);

  return {
    requests: { total, by_cache_result: byCacheResult, by_source: bySource },
    duration: {
      bounds_s: bounds.filter((bound) => Number.isFinite(bound)),
      cumulative: bounds.map((bound) => buckets.get(bound) ?? 0),
      sum_s: sum,
    },
    tiers: {
      hot: {
        bytes: single('svc_hot_store_bytes'),
        entries: single('svc_hot_store_entries'),
        max_bytes: capacities.hotMaxBytes,
        evictions: single('svc_hot_store_evictions_total'),
      },
      warm:
        capacities.warmMaxBytes === undefined
          ? null
          : { bytes: single('svc_warm_store_bytes'), entries: single('svc_warm_store_entries'), max_bytes: capacities.warmMaxBytes },
    },
  };
}
