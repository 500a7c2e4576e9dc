// Strong mode's peer fetch in a data-plane worker: the same PeerFetcher a single process runs, asking
// owners through the primary's cluster member (relayed-cluster-member.ts) and recognising the
// primary's hop token, so that what the primary's owner side forwards to the data plane is answered
// by whichever worker it lands on. It only asks: peers' requests reach the primary.
import type { Config } from '../../config/index.js';
import type { CacheEntry } from '../../cache/entry.js';
import type { HeaderLookup } from '../../cache/policy/header-lookup.js';
import { registerPeerFetchMetrics } from '../../clustering/cluster-metrics.js';
import { PeerFetcher, type PeerFetchMember } from '../../clustering/peer-fetcher.js';
import { PeerRouting, type RoutingMember } from '../../clustering/peer-routing.js';
import type { NodeMetrics } from '../../observe/metrics.js';

export interface WorkerPeers {
  /** The primary's member as this worker sees it. */
  member: PeerFetchMember & RoutingMember;
  /** The primary's peer-fetch hop token. */
  hopToken: string;
}

export interface WorkerPeerFetcherDeps {
  config: Config & { cluster: NonNullable<Config['cluster']> };
  metrics: NodeMetrics;
  now: () => number;
  dataPlaneUrl: () => string;
  freshEntry: (key: string, requestHeaders: HeaderLookup) => CacheEntry | undefined;
}

export function createWorkerPeerFetcher(peers: WorkerPeers, deps: WorkerPeerFetcherDeps): PeerFetcher {
  const { config } = deps;
  return new PeerFetcher({
    member: peers.member,
    routing: new PeerRouting(peers.member, config.cluster.peer_timeout, peers.hopToken),
    hopLimit: config.hop_limit!,
    dataPlane: () => deps.dataPlaneUrl(),
    counters: registerPeerFetchMetrics(deps.metrics.registry),
    freshEntry: deps.freshEntry,
    now: deps.now,
    maxObjectBytes: config.max_object_bytes,
    writeIdleTimeoutMs: config.client_write_idle_timeout,
  });
}
