// What this node answers on `/v1/peer/metrics`: the figures the dashboard's Overview reads (the metrics
// registry added up across routes, methods, statuses and threads), with the node's name, version and
// the age of its counters, in the wire's fixed shape (src/clustering/peer-metrics-wire.ts).
import type { MetricsSummary } from '../admin/dashboard/metrics-summary.js';
import { PEER_METRICS_WIRE_VERSION, type PeerMetrics } from '../clustering/peer-metrics-wire.js';
import { buildInfo } from '../version/build-info.js';

export function peerMetricsReport(summary: MetricsSummary, nodeName: string): PeerMetrics {
  const { total, by_cache_result: results, by_source: sources } = summary.requests;
  const { hot, warm } = summary.tiers;
  return {
    v: PEER_METRICS_WIRE_VERSION,
    node: nodeName,
    version: buildInfo().version,
    uptime_s: process.uptime(),
    requests: {
      total,
      by_cache_result: { HIT: results.HIT ?? 0, MISS: results.MISS ?? 0, STALE: results.STALE ?? 0, REVALIDATED: results.REVALIDATED ?? 0, BYPASS: results.BYPASS ?? 0 },
      by_source: { hot: sources.hot ?? 0, warm: sources.warm ?? 0, peer: sources.peer ?? 0, origin: sources.origin ?? 0 },
    },
    tiers: {
      hot: { bytes: hot.bytes, entries: hot.entries, max_bytes: hot.max_bytes, evictions: hot.evictions },
      warm: warm === null ? null : { bytes: warm.bytes, entries: warm.entries, max_bytes: warm.max_bytes },
    },
  };
}
