// The answer of `/v1/peer/metrics` (spec §4.1 names the endpoint; its payload is ours, docs/decisions.md):
// what one node tells another of its traffic and tiers, for the dashboard's cluster view. Counters are
// totals since the node's process started, as `/metrics` prints them: the reader turns two readings
// into rates, so no node keeps a window for its peers. The request body is empty. JSON, versioned; an
// answer is validated field by field, as anything from the network is.
import * as v from 'valibot';
import { MalformedRequestError } from '../../cluster/index.js';

/** The channel, served as `/v1/peer/metrics` by the UDP transport. */
export const PEER_METRICS_CHANNEL = 'metrics';
export const PEER_METRICS_WIRE_VERSION = 1;

const count = v.pipe(v.number(), v.finite(), v.minValue(0));
/** The spec's `cache_result` values (§6.5), each always present. */
const byCacheResult = v.object({ HIT: count, MISS: count, STALE: count, REVALIDATED: count, BYPASS: count });
/** The spec's `source` values (§6.5), each always present. */
const bySource = v.object({ hot: count, warm: count, peer: count, origin: count });
const tier = v.object({ bytes: count, entries: count, max_bytes: count });

const PeerMetricsSchema = v.object({
  v: v.literal(PEER_METRICS_WIRE_VERSION),
  /** The node's `cluster.node_name`. */
  node: v.pipe(v.string(), v.maxLength(256)),
  /** svc's version on that node. */
  version: v.pipe(v.string(), v.maxLength(64)),
  /** Seconds since the node's process started: the age of its counters. */
  uptime_s: count,
  /** `svc_requests_total` added up over methods, statuses and routes. */
  requests: v.object({ total: count, by_cache_result: byCacheResult, by_source: bySource }),
  tiers: v.object({ hot: v.object({ ...tier.entries, evictions: count }), warm: v.nullable(tier) }),
});

export type PeerMetrics = v.InferOutput<typeof PeerMetricsSchema>;

/** A `/v1/peer/metrics` answer that is not one (another version, a field missing or of another type). */
export class MalformedPeerMetricsError extends Error {
  override readonly name = 'MalformedPeerMetricsError';
  readonly code = 'malformed_peer_metrics';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodePeerMetrics(metrics: PeerMetrics): Uint8Array {
  return encoder.encode(JSON.stringify(metrics));
}

export function decodePeerMetrics(bytes: Uint8Array): PeerMetrics {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new MalformedPeerMetricsError('the metrics answer is not JSON');
  }
  const parsed = v.safeParse(PeerMetricsSchema, value);
  if (!parsed.success) throw new MalformedPeerMetricsError(`the metrics answer is malformed at ${v.getDotPath(parsed.issues[0]) ?? 'its root'}`);
  return parsed.output;
}

/** A metrics request asks for nothing: any body is a caller's mistake (400 on the HTTP path). */
export function checkPeerMetricsRequest(body: Uint8Array): void {
  if (body.byteLength !== 0) throw new MalformedRequestError(`a metrics request has an empty body, not ${body.byteLength} bytes`);
}
