// The cluster metrics of spec §6.5, registered on the node's registry when it runs in a cluster.
// Peer-fetch metrics exist in both modes; in eventual mode they stay zero (spec §1.4).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DeliveryCounters, ClusterMode } from './invalidation-delivery.js';
import type { PeerFetchCounters } from './peer-fetcher.js';

export interface ClusterMetrics {
  delivery: DeliveryCounters;
  peerFetch: PeerFetchCounters;
  /** 1 while the node is catching up with the cluster's invalidations, 0 once it has. */
  catchingUp: (value: 0 | 1) => void;
  /** A catch-up found the node away for longer than a peer's log reaches back. */
  catchUpGap: () => void;
}

export interface ClusterMetricSources {
  gossipDrops: () => number;
  /** Inputs refused for want of authentication, by path (packet, request, answer, broadcast). */
  authRejected: () => Record<string, number>;
}

export function registerClusterMetrics(registry: Registry, mode: ClusterMode, sources: ClusterMetricSources): ClusterMetrics {
  const registers = [registry];
  new Gauge({ name: 'svc_cluster_mode_info', help: 'The cluster.mode this node runs (value always 1).', labelNames: ['mode'], registers }).set(
    { mode },
    1,
  );
  const http = new Counter({
    name: 'svc_cluster_invalidations_http_total',
    help: 'Invalidations sent by HTTP (fan-out to all peers, or POST to the owner).',
    labelNames: ['type'],
    registers,
  });
  const gossip = new Counter({ name: 'svc_cluster_invalidations_gossip_total', help: 'Invalidations sent by gossip.', labelNames: ['type'], registers });
  const failures = new Counter({
    name: 'svc_cluster_broadcast_failures_total',
    help: 'Peers the HTTP path of an invalidation did not reach (gossip still carries it).',
    labelNames: ['type', 'reason'],
    registers,
  });
  new Counter({
    name: 'svc_cluster_gossip_drops_total',
    help: 'Gossip messages dropped because a queue was full.',
    registers,
    collect() {
      this.reset();
      this.inc(sources.gossipDrops());
    },
  });
  new Counter({
    name: 'svc_cluster_auth_rejected_total',
    help: 'Cluster inputs refused because no key of the cluster opened them (forged, foreign or in the clear), by path.',
    labelNames: ['path'],
    registers,
    collect() {
      this.reset();
      for (const [path, count] of Object.entries(sources.authRejected())) this.inc({ path }, count);
    },
  });
  const applied = new Counter({
    name: 'svc_cluster_invalidations_applied_total',
    help: 'Invalidations made on other nodes and applied here, by the path that brought them first.',
    labelNames: ['type', 'path'],
    registers,
  });
  const catchingUp = new Gauge({
    name: 'svc_cluster_catching_up',
    help: 'Whether the node is catching up with the invalidations it missed (1) or has caught up (0).',
    registers,
  });
  catchingUp.set(1);
  const gaps = new Counter({
    name: 'svc_cluster_catch_up_gaps_total',
    help: 'Catch-ups that found the node away longer than a peer log reaches back: older entries distrusted.',
    registers,
  });
  return {
    delivery: {
      http: (type) => http.inc({ type }),
      gossip: (type) => gossip.inc({ type }),
      failure: (type, reason) => failures.inc({ type, reason }),
      applied: (type, path) => applied.inc({ type, path }),
    },
    catchingUp: (value) => catchingUp.set(value),
    catchUpGap: () => gaps.inc(),
    peerFetch: registerPeerFetchMetrics(registry),
  };
}

/**
 * The peer-fetch metrics alone: what a data-plane worker registers (it asks peers through its
 * primary, whose registry holds the other cluster metrics; `/metrics` sums both).
 */
export function registerPeerFetchMetrics(registry: Registry): PeerFetchCounters {
  const registers = [registry];
  const peerHits = new Counter({ name: 'svc_peer_fetch_hits_total', help: 'Peer fetches the owner answered from its cache.', registers });
  const peerMisses = new Counter({
    name: 'svc_peer_fetch_misses_total',
    help: 'Peer fetches the owner answered from the origin, or could not answer.',
    registers,
  });
  const hopLimitHits = new Counter({
    name: 'svc_peer_fetch_hop_limit_hits_total',
    help: 'Peer fetches that reached hop_limit on a node not owning their key.',
    registers,
  });
  const refused = new Counter({
    name: 'svc_peer_fetch_refused_total',
    help: 'Peer fetches the owner refused (reason too_large: above its max_object_bytes); the asking node went to the origin.',
    labelNames: ['reason'],
    registers,
  });
  refused.inc({ reason: 'too_large' }, 0);
  const peerDuration = new Histogram({
    name: 'svc_peer_fetch_duration_seconds',
    help: 'Time of one peer fetch, answered or not.',
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  return {
    hit: () => peerHits.inc(),
    miss: () => peerMisses.inc(),
    hopLimit: () => hopLimitHits.inc(),
    refusedTooLarge: () => refused.inc({ reason: 'too_large' }),
    duration: (seconds) => peerDuration.observe(seconds),
  };
}
