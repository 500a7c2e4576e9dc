// A clustered svc node (spec §1.4): the cluster member over the configured transport, the delivery of
// invalidations its mode calls for, peer fetch in strong mode, mode-drift detection, and what the admin
// API shows of the cluster. The cluster library knows nothing of caching; this is where svc plugs in.
import { randomUUID } from 'node:crypto';
import { createClusterMember, type ClusterMember, type Transport } from '../../cluster/index.js';
import { clusterSecurityWarning, createUdpTransport, decodeGossipKeys, loadTlsMaterial } from '../../transports/udp/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../observe/logger.js';
import type { NodeMetrics } from '../observe/metrics.js';
import type { Readiness } from '../node/readiness.js';
import type { Invalidator } from '../invalidation/invalidator.js';
import type { Peer } from '../api/responses.js';
import { storedKeyOfUrl } from '../cache/policy/cache-key.js';
import { buildInfo } from '../version/build-info.js';
import { InvalidationDelivery, type ClusterMode } from './invalidation-delivery.js';
import { ClusterInvalidator, applyRemoteInvalidation } from './cluster-invalidator.js';
import { registerClusterMetrics } from './cluster-metrics.js';
import { PeerFetcher, type PeerFetcherOptions } from './peer-fetcher.js';
import { RingShares, peerView } from './peer-view.js';

type ClusterConfig = NonNullable<Config['cluster']>;

export interface ClusterNodeOptions {
  config: Config & { cluster: ClusterConfig };
  logger: Logger;
  metrics: NodeMetrics;
  readiness: Readiness;
  /** The node's own invalidation engine; invalidations from peers are applied to it. */
  local: Invalidator;
  /** `host:port` of this node's admin listener, advertised to peers. */
  adminAddress: string;
  /** This node's data plane, once it listens. */
  dataPlaneUrl: () => string;
  /** The fresh entry that answers a plain request for a key as a HIT (the node's cache flow). */
  freshEntry: PeerFetcherOptions['freshEntry'];
  now: () => number;
}

export interface RingStats {
  mode: ClusterMode;
  members: number;
  own_share: number;
  checksum: string;
  version: number;
  owner: string | null;
}

/** Peer fetches may wait on the owner's origin fetch: as long as the slowest pool allows, plus 1 s. */
function peerFetchTimeoutMs(config: Config): number {
  return Math.max(...config.pools.map((pool) => pool.connect_timeout + pool.response_timeout)) + 1_000;
}

async function createTransport(cluster: ClusterConfig): Promise<Transport & { security?: Parameters<typeof clusterSecurityWarning>[0] }> {
  if (cluster.transport === 'libp2p') {
    const { createLibp2pTransport } = await import('../../transports/libp2p/index.js');
    const libp2p = cluster.libp2p!;
    return createLibp2pTransport({
      dataDir: libp2p.data_dir,
      allowedPeerIds: libp2p.allowed_peer_ids,
      listen: cluster.bind,
      ...(cluster.advertise ? { advertise: cluster.advertise } : {}),
    });
  }
  return createUdpTransport({
    bind: cluster.bind,
    ...(cluster.advertise ? { advertise: cluster.advertise } : {}),
    ...(cluster.tls ? { tls: await loadTlsMaterial(cluster.tls) } : {}),
    ...(cluster.gossip_keys ? { gossipKeys: decodeGossipKeys(cluster.gossip_keys) } : {}),
  });
}

export class ClusterNode {
  readonly mode: ClusterMode;
  readonly invalidator: ClusterInvalidator;
  readonly peerFetcher: PeerFetcher | undefined;
  private readonly delivery: InvalidationDelivery;
  private readonly shares: RingShares;
  private readonly driftLogged = new Set<string>();

  private constructor(
    readonly member: ClusterMember,
    private readonly options: ClusterNodeOptions,
  ) {
    const { config, metrics, logger } = options;
    this.mode = config.cluster.mode;
    const clusterMetrics = registerClusterMetrics(metrics.registry, this.mode, () => member.counters().gossipDrops);
    this.delivery = new InvalidationDelivery({
      member,
      mode: this.mode,
      apply: (message) => applyRemoteInvalidation(options.local, message),
      keyOf: (url) => storedKeyOfUrl(new URL(url)),
      counters: clusterMetrics.delivery,
      newId: randomUUID,
      now: options.now,
      onError: (error) => logger.warn({ err: error }, 'applying an invalidation from a peer failed'),
    });
    this.invalidator = new ClusterInvalidator(options.local, this.delivery, randomUUID);
    this.peerFetcher =
      this.mode === 'strong'
        ? new PeerFetcher({
            member,
            hopLimit: config.hop_limit!,
            timeoutMs: peerFetchTimeoutMs(config),
            dataPlaneUrl: options.dataPlaneUrl,
            counters: clusterMetrics.peerFetch,
            freshEntry: options.freshEntry,
            now: options.now,
            maxObjectBytes: config.max_object_bytes,
            writeIdleTimeoutMs: config.client_write_idle_timeout,
          })
        : undefined;
    this.shares = new RingShares(member.ring);
  }

  /** Builds the node (nothing is sent yet); `start` joins the cluster. */
  static async create(options: ClusterNodeOptions): Promise<ClusterNode> {
    const { cluster } = options.config;
    const transport = await createTransport(cluster);
    const warning = transport.security ? clusterSecurityWarning(transport.security) : null;
    if (warning) options.logger.warn({ transport: cluster.transport }, warning);
    // The delegate needs the node, and the node needs the member: the delegate reads it once both exist.
    const built: { node?: ClusterNode } = {};
    const member = createClusterMember({
      name: cluster.node_name,
      transport,
      metadata: { mode: cluster.mode, admin: options.adminAddress, version: buildInfo().version },
      // Recent invalidations ride on push-pull, so a node back from a partition or a restart applies
      // what it missed (issue 7 item 4).
      delegate: {
        pushPullState: () => built.node?.delivery.state() ?? new Uint8Array(0),
        mergeRemoteState: (state) => built.node?.delivery.merge(state),
      },
      onListenerError: (error) => options.logger.warn({ err: error }, 'cluster listener failed'),
    });
    built.node = new ClusterNode(member, options);
    return built.node;
  }

  /** Starts the member (ring_build), then joins through the seeds in the background (join). */
  async start(): Promise<void> {
    const { readiness, config, logger } = this.options;
    readiness.expect('cluster_joined', 'joining the cluster');
    readiness.set('cluster_mode_consistent', true, `every member runs ${this.mode}`, false);
    this.delivery.start();
    this.peerFetcher?.start();
    for (const event of ['join', 'update', 'leave', 'fail'] as const) this.member.on(event, () => this.checkModes());
    // Joined once any peer is live in our view, whoever initiated it: when nodes start together, the
    // others may join this one while its own join is still backing off between attempts.
    const joinedBy = this.member.on('join', (peer) => {
      if (peer.name === this.member.localMember.name) return;
      readiness.set('cluster_joined', true, `member of a cluster with ${peer.name}`);
      joinedBy();
    });
    await readiness.phase('ring_build', () => this.member.start());
    const self = new Set([config.cluster.bind, config.cluster.advertise, this.member.localMember.address]);
    const seeds = config.cluster.join.filter((seed) => !self.has(seed));
    if (seeds.length === 0) {
      readiness.set('cluster_joined', true, 'first node: no seed to join');
      return;
    }
    void readiness
      .phase('join', () => this.member.join(seeds))
      .then((answered) => {
        if (!readiness.detail().some((c) => c.name === 'cluster_joined' && c.ready)) {
          readiness.set('cluster_joined', true, `joined through ${answered} of ${seeds.length} seeds`);
        }
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'cluster join stopped'));
  }

  /** Spec §1.4: every node must run one mode; another mode seen is a configuration drift. */
  private checkModes(): void {
    const drifting = this.member
      .members()
      .filter((m) => (m.state === 'alive' || m.state === 'suspect') && m.metadata.mode !== this.mode)
      .map((m) => m.name);
    for (const name of drifting) {
      if (this.driftLogged.has(name)) continue;
      this.driftLogged.add(name);
      this.options.logger.error({ member: name, mode: this.mode }, `cluster mode drift: member ${name} does not run ${this.mode}`);
    }
    if (drifting.length === 0) this.options.readiness.set('cluster_mode_consistent', true, `every member runs ${this.mode}`, false);
    else this.options.readiness.set('cluster_mode_consistent', false, `members running another mode: ${drifting.join(', ')}`, false);
  }

  /** The owner of a stored key in strong mode; null in eventual mode (no key placement). */
  ownerOf(key: string): string | null {
    return this.mode === 'strong' ? (this.member.ring.owner(key) ?? null) : null;
  }

  peers(): Peer[] {
    return this.member.members().map((m) => peerView(m, this.mode, this.shares));
  }

  ringStats(url?: string): RingStats {
    const ring = this.member.ring;
    return {
      mode: this.mode,
      members: ring.members.length,
      own_share: this.mode === 'strong' ? this.shares.of(this.member.localMember.name) : 0,
      checksum: String(this.member.checksum()),
      version: ring.version,
      owner: url === undefined ? null : this.ownerOf(storedKeyOfUrl(new URL(url))),
    };
  }

  /** Leaves gracefully (peers learn at once rather than by failure detection), then stops. */
  async stop(): Promise<void> {
    this.delivery.stop();
    await this.member.leave({ timeoutMs: 1_000 }).catch(() => undefined);
    await this.member.stop();
    await this.peerFetcher?.close();
  }
}
