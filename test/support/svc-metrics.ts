// The metrics svc exports, as the spec names them (§6.5) and beside them the few it adds, and a
// reader of the Prometheus text format that groups samples into their families. The metrics audit
// (test/observe/metrics-audit.test.ts) proves a node exports each of them; the dashboard test
// (test/examples/grafana-dashboard.test.ts) checks every query names only these.

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface ExportedMetric {
  name: string;
  type: MetricType;
  /** Label names of every sample (`le` of histogram buckets aside). */
  labels: readonly string[];
}

export interface SpecMetric extends ExportedMetric {
  group: 'traffic' | 'storage' | 'cluster' | 'startup' | 'cdn' | 'refresh';
}

const TRAFFIC_LABELS = ['method', 'status', 'cache_result', 'source', 'route'];

/** Spec §6.5, every table, in its order. */
export const SPEC_METRICS: readonly SpecMetric[] = [
  { group: 'traffic', name: 'svc_requests_total', type: 'counter', labels: TRAFFIC_LABELS },
  { group: 'traffic', name: 'svc_request_duration_seconds', type: 'histogram', labels: TRAFFIC_LABELS },
  { group: 'traffic', name: 'svc_response_bytes_total', type: 'counter', labels: ['method', 'cache_result', 'source', 'route'] },
  { group: 'storage', name: 'svc_hot_store_bytes', type: 'gauge', labels: [] },
  { group: 'storage', name: 'svc_hot_store_entries', type: 'gauge', labels: [] },
  { group: 'storage', name: 'svc_hot_store_evictions_total', type: 'counter', labels: [] },
  { group: 'storage', name: 'svc_vary_cap_hits_total', type: 'counter', labels: [] },
  { group: 'storage', name: 'svc_warm_store_bytes', type: 'gauge', labels: [] },
  { group: 'storage', name: 'svc_warm_store_entries', type: 'gauge', labels: [] },
  { group: 'storage', name: 'svc_warm_store_self_heals_total', type: 'counter', labels: [] },
  { group: 'storage', name: 'svc_wal_dropped_entries_total', type: 'counter', labels: [] },
  { group: 'storage', name: 'svc_wal_last_sync_timestamp_seconds', type: 'gauge', labels: [] },
  { group: 'storage', name: 'svc_http_smuggling_rejected_total', type: 'counter', labels: [] },
  { group: 'cluster', name: 'svc_cluster_mode_info', type: 'gauge', labels: ['mode'] },
  { group: 'cluster', name: 'svc_peer_fetch_hits_total', type: 'counter', labels: [] },
  { group: 'cluster', name: 'svc_peer_fetch_misses_total', type: 'counter', labels: [] },
  { group: 'cluster', name: 'svc_peer_fetch_hop_limit_hits_total', type: 'counter', labels: [] },
  { group: 'cluster', name: 'svc_peer_fetch_duration_seconds', type: 'histogram', labels: [] },
  { group: 'cluster', name: 'svc_cluster_invalidations_http_total', type: 'counter', labels: ['type'] },
  { group: 'cluster', name: 'svc_cluster_invalidations_gossip_total', type: 'counter', labels: ['type'] },
  { group: 'cluster', name: 'svc_cluster_broadcast_failures_total', type: 'counter', labels: ['type', 'reason'] },
  { group: 'cluster', name: 'svc_cluster_gossip_drops_total', type: 'counter', labels: [] },
  { group: 'startup', name: 'svc_startup_phase', type: 'gauge', labels: ['phase'] },
  { group: 'startup', name: 'svc_startup_condition_ready', type: 'gauge', labels: ['condition'] },
  { group: 'startup', name: 'svc_startup_duration_seconds', type: 'histogram', labels: [] },
  { group: 'cdn', name: 'svc_cdn_purge_total', type: 'counter', labels: ['operation', 'status'] },
  { group: 'cdn', name: 'svc_cdn_purge_duration_seconds', type: 'histogram', labels: ['operation'] },
  { group: 'cdn', name: 'svc_cdn_purge_skipped_total', type: 'counter', labels: ['reason'] },
  { group: 'refresh', name: 'svc_refresh_total', type: 'counter', labels: ['route', 'result'] },
  { group: 'refresh', name: 'svc_refresh_errors_total', type: 'counter', labels: ['route', 'error_type'] },
  { group: 'refresh', name: 'svc_refresh_skips_total', type: 'counter', labels: ['route', 'reason'] },
  { group: 'refresh', name: 'svc_refresh_in_flight', type: 'gauge', labels: ['route'] },
  { group: 'refresh', name: 'svc_refresh_scheduled', type: 'gauge', labels: ['route'] },
  { group: 'refresh', name: 'svc_refresh_registry_size', type: 'gauge', labels: ['route'] },
];

/** What svc exports beyond the spec (docs/observability.md says why). */
export const SVC_EXTRA_METRICS: readonly ExportedMetric[] = [
  { name: 'svc_cdn_purge_pending', type: 'gauge', labels: [] },
  { name: 'svc_tracing_spans_dropped_total', type: 'counter', labels: ['reason'] },
  // The edge (issue 14): refused requests, wrong admin tokens, errors the last resort caught.
  { name: 'svc_http_requests_rejected_total', type: 'counter', labels: ['listener', 'reason'] },
  { name: 'svc_admin_auth_failures_total', type: 'counter', labels: ['result'] },
  { name: 'svc_uncaught_errors_total', type: 'counter', labels: ['kind'] },
  // Bans (issue 14 item 6): in force, and refused past max_active_bans.
  { name: 'svc_bans_active', type: 'gauge', labels: [] },
  { name: 'svc_bans_rejected_total', type: 'counter', labels: [] },
  // Fills (issue 15): clients cut off, and complete fills the store gate kept out of the cache.
  { name: 'svc_fill_clients_cut_total', type: 'counter', labels: ['reason'] },
  { name: 'svc_fill_store_refused_total', type: 'counter', labels: [] },
  // TLS (issue 32): seconds until each served certificate expires; no series without a TLS listener.
  { name: 'svc_tls_certificate_expiry_seconds', type: 'gauge', labels: ['listener', 'name'] },
];

/** Runtime and process metrics (spec §6.5's `go_*` and `process_*`; Node's are `nodejs_*`). */
export const RUNTIME_METRIC_PREFIXES = ['process_', 'nodejs_'] as const;

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  type: string;
  samples: Sample[];
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[match[1]!] = match[2]!.replace(/\\(.)/g, '$1');
  return labels;
}

/** The families of a Prometheus text exposition, by name; a histogram's samples under its own name. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  for (const line of text.split('\n')) {
    const typeLine = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (typeLine) {
      current = { type: typeLine[2]!, samples: [] };
      families.set(typeLine[1]!, current);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || !current) throw new Error(`not a sample line: ${line}`);
    current.samples.push({ name: sample[1]!, labels: parseLabels(sample[2] ?? ''), value: Number(sample[3]) });
  }
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`; NaN when there is none. */
export function valueOf(families: Map<string, Family>, family: string, sampleName: string, labels: Record<string, string> = {}): number {
  const found = families
    .get(family)
    ?.samples.find((s) => s.name === sampleName && Object.entries(labels).every(([label, value]) => s.labels[label] === value));
  return found === undefined ? Number.NaN : found.value;
}
