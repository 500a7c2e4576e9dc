// `svc top`'s view of a node, made from two readings of its `/metrics` a few seconds apart: request
// rates by cache result and by source, hit ratio, latency quantiles, tier sizes, evictions; and its
// rendering as a terminal frame. Pure functions: the command fetches, these compute and draw.
import type { Peer, StatsResponse } from '../../api/responses.js';
import { bucketDelta, histogramBuckets, histogramQuantile, sumBy, valueOf, type Sample } from './metrics-text.js';

export const CACHE_RESULTS = ['HIT', 'STALE', 'REVALIDATED', 'MISS', 'BYPASS'] as const;
export const SOURCES = ['hot', 'warm', 'peer', 'origin'] as const;

export interface NodeReading {
  /** The node's name in the cluster, or its admin address. */
  name: string;
  atMs: number;
  samples: Sample[];
  /** `/v1/stats` (active bans, whether there is a warm tier); null without a token. */
  stats: StatsResponse | null;
}

export interface NodeView {
  name: string;
  /** Over the interval between the two readings. */
  requestsPerSecond: number;
  perSecondByCacheResult: Record<string, number>;
  perSecondBySource: Record<string, number>;
  /** (HIT + STALE) / every cacheable answer (BYPASS excluded); null without such an answer. */
  hitRatio: number | null;
  /** p50, p95, p99 in milliseconds over the interval (the dashboard's quantiles); null without a request. */
  latencyMs: { p50: number; p95: number; p99: number } | null;
  hot: { entries: number; bytes: number };
  /** Null when the node has no warm tier (known from `/v1/stats`). */
  warm: { entries: number; bytes: number } | null;
  evictionsPerSecond: number;
  evictionsTotal: number;
  bansActive: number | null;
  /** Since the node started. */
  totals: { requests: number; byCacheResult: Record<string, number>; hitRatio: number | null };
}

function hitRatioOf(byResult: Record<string, number>): number | null {
  const served = (byResult.HIT ?? 0) + (byResult.STALE ?? 0);
  const cacheable = served + (byResult.REVALIDATED ?? 0) + (byResult.MISS ?? 0);
  return cacheable === 0 ? null : served / cacheable;
}

function byLabel(samples: readonly Sample[], label: string, keys: readonly string[]): Record<string, number> {
  const sums = sumBy(samples, 'svc_requests_total', label);
  return Object.fromEntries(keys.map((key) => [key, sums.get(key) ?? 0]));
}

/** A counter's increase; a counter that went down was reset (a restart) and counts from zero. */
function increase(before: number, after: number): number {
  return after >= before ? after - before : after;
}

export function nodeView(before: NodeReading, after: NodeReading): NodeView {
  const seconds = Math.max((after.atMs - before.atMs) / 1000, 0.001);
  const rate = (earlier: Record<string, number>, later: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(later).map(([key, value]) => [key, increase(earlier[key] ?? 0, value) / seconds]));
  const resultsBefore = byLabel(before.samples, 'cache_result', CACHE_RESULTS);
  const resultsAfter = byLabel(after.samples, 'cache_result', CACHE_RESULTS);
  const perSecondByCacheResult = rate(resultsBefore, resultsAfter);
  const latency = bucketDelta(histogramBuckets(before.samples, 'svc_request_duration_seconds'), histogramBuckets(after.samples, 'svc_request_duration_seconds'));
  const quantile = (q: number): number | undefined => {
    const seconds = histogramQuantile(q, latency);
    return seconds === undefined ? undefined : seconds * 1000;
  };
  const p50 = quantile(0.5);
  const evictionsBefore = valueOf(before.samples, 'svc_hot_store_evictions_total') ?? 0;
  const evictionsAfter = valueOf(after.samples, 'svc_hot_store_evictions_total') ?? 0;
  return {
    name: after.name,
    requestsPerSecond: Object.values(perSecondByCacheResult).reduce((sum, value) => sum + value, 0),
    perSecondByCacheResult,
    perSecondBySource: rate(byLabel(before.samples, 'source', SOURCES), byLabel(after.samples, 'source', SOURCES)),
    hitRatio: hitRatioOf(Object.fromEntries(Object.keys(resultsAfter).map((key) => [key, increase(resultsBefore[key] ?? 0, resultsAfter[key] ?? 0)]))),
    latencyMs: p50 === undefined ? null : { p50, p95: quantile(0.95)!, p99: quantile(0.99)! },
    hot: { entries: valueOf(after.samples, 'svc_hot_store_entries') ?? 0, bytes: valueOf(after.samples, 'svc_hot_store_bytes') ?? 0 },
    warm:
      after.stats?.tiers.warm === null
        ? null
        : { entries: valueOf(after.samples, 'svc_warm_store_entries') ?? 0, bytes: valueOf(after.samples, 'svc_warm_store_bytes') ?? 0 },
    evictionsPerSecond: increase(evictionsBefore, evictionsAfter) / seconds,
    evictionsTotal: evictionsAfter,
    bansActive: after.stats?.bans.active ?? null,
    totals: {
      requests: Object.values(resultsAfter).reduce((sum, value) => sum + value, 0),
      byCacheResult: resultsAfter,
      hitRatio: hitRatioOf(resultsAfter),
    },
  };
}

export interface TopView {
  at: string;
  intervalMs: number;
  nodes: NodeView[];
  /** The members the asked node knows of; empty for a node that runs alone. */
  peers: Peer[];
}

const bytes = (value: number): string => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let unit = 0;
  for (; value >= 1024 && unit < units.length - 1; unit++) value /= 1024;
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
};
const perSecond = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const percent = (ratio: number | null): string => (ratio === null ? '-' : `${(ratio * 100).toFixed(1)}%`);
const millis = (value: number): string => (value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(2)} ms`);

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ').trimEnd());
}

function nodeLines(view: NodeView): string[] {
  const lines = [`node ${view.name}`];
  lines.push(
    ...table([
      ['', 'req/s', ...CACHE_RESULTS, 'hit ratio'],
      ['by result', perSecond(view.requestsPerSecond), ...CACHE_RESULTS.map((result) => perSecond(view.perSecondByCacheResult[result] ?? 0)), percent(view.hitRatio)],
      ['since start', String(view.totals.requests), ...CACHE_RESULTS.map((result) => String(view.totals.byCacheResult[result] ?? 0)), percent(view.totals.hitRatio)],
    ]).map((line) => `  ${line}`),
  );
  lines.push(`  by source    ${SOURCES.map((source) => `${source} ${perSecond(view.perSecondBySource[source] ?? 0)}/s`).join('   ')}`);
  lines.push(`  latency      ${view.latencyMs === null ? 'no request in the interval' : `p50 ${millis(view.latencyMs.p50)}   p95 ${millis(view.latencyMs.p95)}   p99 ${millis(view.latencyMs.p99)}`}`);
  const warm = view.warm === null ? 'none' : `${view.warm.entries} entries, ${bytes(view.warm.bytes)}`;
  lines.push(`  tiers        hot ${view.hot.entries} entries, ${bytes(view.hot.bytes)}   warm ${warm}`);
  lines.push(`  evictions    ${perSecond(view.evictionsPerSecond)}/s (${view.evictionsTotal} since start)`);
  lines.push(`  bans         ${view.bansActive === null ? '- (needs --token)' : `${view.bansActive} active`}`);
  return lines;
}

/** The frame as text: one block per node, then the cluster's members. */
export function renderTop(view: TopView): string {
  const lines = [`svc top  ${view.at}  every ${view.intervalMs / 1000} s`, ''];
  for (const node of view.nodes) lines.push(...nodeLines(node), '');
  if (view.peers.length === 0) {
    lines.push('peers        none: this node runs alone');
  } else {
    const alive = view.peers.filter((peer) => peer.state === 'alive').length;
    lines.push(`peers        ${alive} of ${view.peers.length} alive, ${view.peers[0]!.mode} mode`);
    lines.push(...table(view.peers.map((peer) => [peer.name, peer.state, peer.admin_address, peer.ring_share === null ? '-' : percent(peer.ring_share)])).map((line) => `  ${line}`));
  }
  return `${lines.join('\n')}\n`;
}
