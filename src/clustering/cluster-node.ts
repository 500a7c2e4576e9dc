// A clustered svc node (spec §1.4): the cluster member over the configured transport, the delivery of
// invalidations its mode calls for, peer fetch in strong mode, mode-drift detection, and what the admin
// API shows of the cluster. The cluster library knows nothing of caching; this is where svc plugs in.
import { randomBytes } from 'node:crypto';
import { createClusterMember, systemClock, type ClusterMember } from '../../cluster/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../observe/logger.js';
import type { NodeMetrics } from '../observe/metrics.js';
import type { Readiness } from '../observe/readiness.js';
import type { Invalidator } from '../invalidation/invalidator.js';
import type { Peer } from '../api/responses.js';
import type { CacheEntry } from '../cache/entry.js';
import { placementKey } from '../cache/policy/cache-key.js';
import { keyOfUrl } from '../invalidation/url-key.js';
import { buildInfo } from '../version/build-info.js';
import type { ClusterMode } from './invalidation-delivery.js';
import { ClusterInvalidator, applyRemoteInvalidation } from './cluster-invalidator.js';
import type { CaughtUpHow } from './catch-up.js';
import { InvalidationSync } from './invalidation-sync.js';
import { InvalidationLog, type LogRecord } from './invalidation-log.js';
import { MemoryLogStore, openFileLogStore, type FileLogStore } from './log-stores.js';
import { createClusterTransport, type ClusterTransport } from './cluster-transport.js';
import { rejectionLog } from './rejection-log.js';
import { registerClusterMetrics } from './cluster-metrics.js';
import { MemberMetricsReader, type MemberMetrics } from './member-metrics.js';
import { PeerFetcher, type PeerFetcherOptions } from './peer-fetcher.js';
import type { PeerMetrics } from './peer-metrics-wire.js';
import { PeerRouting } from './peer-routing.js';
import { RingShares, peerView } from './peer-view.js';
import { epochOfMonotonic, ServeGate } from './serve-gate.js';
import { ServeGuard } from './serve-guard.js';
import type { InvalidationMessage } from './invalidation-message.js';

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
  dataPlane: PeerFetcherOptions['dataPlane'];
  /** The fresh entry that answers a plain request for a key as a HIT (the node's cache flow). */
  freshEntry: PeerFetcherOptions['freshEntry'];
  /** Whether the node's tiers hold any entry (a node with nothing cached has nothing to distrust). */
  holdsEntries: () => boolean;
  /** This node's traffic and tiers, as `/v1/peer/metrics` answers them (the dashboard's cluster view). */
  metricsReport: () => Promise<PeerMetrics>;
  /** Where the invalidation log is kept (beside the engine's journal); memory without one. */
  stateDir: string | undefined;
  now: () => number;
}

/**
 * How long a node waits for a seed to answer its first join before it takes itself to be the cluster
 * (a cold start: its seeds are not up yet). Refused seeds fail the first round within milliseconds; this
 * bounds seeds whose hosts do not answer at all (a connect waits up to 2 s), so a first node is ready
 * within about a second of its start (issue 28 item 4).
 */
export const FIRST_JOIN_WAIT_MS = 1_000;
/**
 * Join retries while no seed has answered: every second at most, not the library's back-off to 30 s, so
 * a node joins within about a second of a seed coming up. It costs one push-pull per seed per second,
 * and only while the node has no peer (memberlist leaves retries to its caller; serf retries every 30 s
 * by default, which would keep two halves of a cold-started cluster apart for that long).
 */
export const JOIN_RETRY_MAX_MS = 1_000;

/** Cluster-wide ids: 96 random bits, 16 characters. */
function newInvalidationId(): string {
  return randomBytes(12).toString('base64url');
}

/**
 * What a gap is answered with: a ban on everything fetched before the time the peer's log reaches
 * back to, local to this node (never sent on). Its id names it in the list of active bans.
 */
function gapBan(atMs: number): { spec: { path_regex: string }; origin: { id: string; atMs: number } } {
  return { spec: { path_regex: '^' }, origin: { id: `catch-up-gap-${atMs}`, atMs } };
}

export interface RingStats {
  mode: ClusterMode;
  members: number;
  own_share: number;
  checksum: string;
  version: number;
  owner: string | null;
}

export class ClusterNode {
  readonly mode: ClusterMode;
  readonly invalidator: ClusterInvalidator;
  readonly peerFetcher: PeerFetcher | undefined;
  private readonly sync: InvalidationSync;
  private readonly shares: RingShares;
  private readonly driftLogged = new Set<string>();
  /**
   * What the data plane may serve, in shared memory for every data-plane thread: entries fetched before
   * the node started (or lost touch) are held back until it has caught up, and in strong mode nothing is
   * served without a lease.
   */
  readonly gate: ServeGate;
  private readonly guard: ServeGuard;
  private readonly metricsReader: MemberMetricsReader;

  private constructor(
    readonly member: ClusterMember,
    private readonly options: ClusterNodeOptions,
    log: InvalidationLog,
    private readonly logStore: FileLogStore | undefined,
    private readonly transport: ClusterTransport,
  ) {
    const { config, metrics, logger, local, now } = options;
    this.mode = config.cluster.mode;
    this.gate = ServeGate.create(now());
    const clusterMetrics = registerClusterMetrics(metrics.registry, this.mode, {
      gossipDrops: () => member.counters().gossipDrops,
      authRejected: () => transport.rejected(),
    });
    this.sync = new InvalidationSync(member, {
      mode: this.mode,
      log,
      apply: (message) => applyRemoteInvalidation(local, message, now()),
      counters: clusterMetrics.delivery,
      clock: systemClock,
      now,
      session: newInvalidationId(),
      peerTimeoutMs: config.cluster.peer_timeout,
      distrustBefore: async (atMs) => {
        const { spec, origin } = gapBan(atMs);
        await local.ban(spec, origin);
        clusterMetrics.catchUpGap();
      },
      holdsEntries: options.holdsEntries,
      onCaughtUp: (how) => {
        clusterMetrics.catchingUp(0);
        this.gate.open();
        this.reportCaughtUp(how);
      },
      onError: (error) => logger.warn({ err: error }, 'an invalidation from a peer could not be applied; catch-up tries again'),
    });
    this.invalidator = new ClusterInvalidator({
      local,
      delivery: this.sync.delivery,
      mode: this.mode,
      newId: newInvalidationId,
      now,
      onPublishError: (error) => logger.error({ err: error }, 'an invalidation applied here could not be sent to the cluster; catch-up will carry it'),
      outlastLeases: (missed, message) => this.outlastLeases(missed, message),
    });
    this.guard = new ServeGuard({
      member,
      mode: this.mode,
      leaseMs: config.cluster.lease,
      clock: systemClock,
      now,
      gate: this.gate,
      gateTime: epochOfMonotonic,
      catchUpAgain: (required, sinceMs) => this.sync.catchUp.again(required, sinceMs),
      onLeaseLost: () => this.leaseLost(),
      onRejoin: (reason) => {
        clusterMetrics.catchingUp(1);
        this.rejoined(reason);
      },
    });
    this.peerFetcher =
      this.mode === 'strong'
        ? new PeerFetcher({
            member,
            routing: new PeerRouting(member, config.cluster.peer_timeout),
            hopLimit: config.hop_limit!,
            dataPlane: options.dataPlane,
            counters: clusterMetrics.peerFetch,
            freshEntry: options.freshEntry,
            now: options.now,
            maxObjectBytes: config.max_object_bytes,
            writeIdleTimeoutMs: config.client_write_idle_timeout,
          })
        : undefined;
    this.shares = new RingShares(member.ring);
    this.metricsReader = new MemberMetricsReader(member, options.metricsReport, config.cluster.peer_timeout);
  }

  /** Builds the node (nothing is sent yet); `start` joins the cluster. */
  static async create(options: ClusterNodeOptions): Promise<ClusterNode> {
    const { cluster } = options.config;
    let records: LogRecord[] = [];
    let fileStore: FileLogStore | undefined;
    if (options.stateDir !== undefined) ({ store: fileStore, records } = await openFileLogStore(options.stateDir));
    const log = InvalidationLog.restore(records, { store: fileStore ?? new MemoryLogStore(), keyOf: keyOfUrl, now: options.now });
    const clusterTransport = await createClusterTransport(cluster, options.config.limits, rejectionLog(options.logger));
    // The delegate needs the node, and the node needs the member: the delegate reads it once both exist.
    const built: { node?: ClusterNode } = {};
    const member = createClusterMember({
      name: cluster.node_name,
      transport: clusterTransport.transport,
      metadata: { mode: cluster.mode, admin: options.adminAddress, version: buildInfo().version },
      // The invalidation log's digest rides on push-pull, so a node back from a partition or a restart
      // fetches what it missed (catch-up.ts).
      delegate: InvalidationSync.delegate(() => built.node?.sync),
      // Spec §1.4: every node runs one mode. One that runs the other is a drift and owns no keys, so no
      // request of this cluster is routed to a cache that keys and invalidates differently.
      ringMembers: (member) => member.metadata.mode === cluster.mode,
      config: { joinRetryMaxMs: JOIN_RETRY_MAX_MS },
      onListenerError: (error) => options.logger.warn({ err: error }, 'cluster listener failed'),
    });
    built.node = new ClusterNode(member, options, log, fileStore, clusterTransport);
    return built.node;
  }

  /**
   * Whether the data plane may serve `entry`: not while the node is catching up, if it was cached
   * before the node started or lost touch (an invalidation the node missed may hide it); in strong
   * mode, not without a lease.
   */
  servable(entry: CacheEntry): boolean {
    return this.gate.servable(entry);
  }

  /**
   * Strong mode: waits until none of `missed` can still hold a lease, so the answer is true of every
   * member. A member's lease counts only its own rounds, and its last round that reached this node
   * was answered at `answeredAt`: it holds none past `answeredAt + lease`.
   */
  private async outlastLeases(missed: readonly string[], message: InvalidationMessage): Promise<void> {
    const waited = await this.guard.outlast(missed);
    this.options.logger.warn(
      { id: message.id, type: message.type, missed: missed.slice(0, 16), missed_count: missed.length, waited_ms: Math.ceil(waited) },
      'a strong invalidation did not reach every member: answered once their leases had run out',
    );
  }

  /** Strong mode: the node serves nothing from its cache until a majority answers again. */
  private leaseLost(): void {
    this.options.readiness.set('cluster_lease', false, 'no lease: out of touch with a majority of the cluster, serving from the origin only', false);
    this.options.logger.warn({ lease_ms: this.guard.leaseMs }, 'cluster lease lost: serving nothing from the cache until a majority of the cluster answers');
  }

  /** The node may have missed invalidations: it says so while it catches up again (ServeGuard). */
  private rejoined(reason: string): void {
    const { readiness, logger } = this.options;
    if (this.mode === 'strong' && this.guard.leased()) readiness.set('cluster_lease', true, 'in touch with a majority of the cluster', false);
    readiness.set('cluster_caught_up', false, `catching up again: ${reason}`);
    logger.warn({ reason }, 'catching up with the cluster again: cached entries are held back until then');
  }

  private reportCaughtUp(how: CaughtUpHow): void {
    const { readiness, logger } = this.options;
    if (how.kind === 'alone') {
      readiness.set('cluster_caught_up', true, `alone: ${how.reason}`);
      logger.info({ reason: how.reason }, 'caught up with the cluster: alone');
      return;
    }
    const gap = how.gapBeforeMs === undefined ? '' : `; away longer than its log reaches back: entries fetched before ${new Date(how.gapBeforeMs).toISOString()} are distrusted`;
    readiness.set('cluster_caught_up', true, `caught up from ${how.peer}: ${how.applied} invalidations applied${gap}`);
    const fields = { peer: how.peer, applied: how.applied, gap_before: how.gapBeforeMs === undefined ? null : new Date(how.gapBeforeMs).toISOString() };
    if (how.gapBeforeMs === undefined) logger.info(fields, 'caught up with the cluster');
    else logger.warn(fields, 'caught up with the cluster after a gap: older cached entries are distrusted');
  }

  /** Starts the member (ring_build), then joins through the seeds in the background (join). */
  async start(): Promise<void> {
    const { readiness, config } = this.options;
    this.reportSecurity();
    if (this.mode === 'strong') readiness.set('cluster_lease', true, 'in touch with a majority of the cluster', false);
    readiness.expect('cluster_joined', 'joining the cluster');
    readiness.expect('cluster_caught_up', 'catching up with the invalidations made while this node was away');
    readiness.set('cluster_mode_consistent', true, `every member runs ${this.mode}`, false);
    this.peerFetcher?.start();
    this.metricsReader.start();
    for (const event of ['join', 'update', 'leave', 'fail'] as const) this.member.on(event, () => this.checkModes());
    // Joined once any peer is live in our view, whoever initiated it: when nodes start together, the
    // others may join this one while its own join is still backing off between attempts.
    const joinedBy = this.member.on('join', (peer) => {
      if (peer.name === this.member.localMember.name) return;
      readiness.set('cluster_joined', true, `member of a cluster with ${peer.name}`);
      joinedBy();
    });
    // Catch-up starts before the member can hear from anyone: a first node knows how far back its log
    // reaches (its start) before a peer can ask, so the peer never takes that for a later time.
    const self = new Set([config.cluster.bind, config.cluster.advertise]);
    const seeds = config.cluster.join.filter((seed) => !self.has(seed));
    this.sync.start(seeds.length);
    await readiness.phase('ring_build', () => this.member.start());
    this.guard.start();
    if (seeds.length === 0) {
      readiness.set('cluster_joined', true, 'first node: no seed to join');
      return;
    }
    this.joinInBackground(seeds);
  }

  /**
   * Joins through `seeds` in the background, retrying until one answers. A node that no seed answers at
   * once (a cold start: they are not up yet) is the cluster until one does: joined, and caught up if it
   * holds nothing cached, rather than unready for as long as the retries take.
   */
  private joinInBackground(seeds: readonly string[]): void {
    const { readiness, logger } = this.options;
    const joined = (): boolean => readiness.detail().some((c) => c.name === 'cluster_joined' && c.ready);
    const alone = (): void => {
      clearTimeout(firstJoinWait);
      if (joined()) return;
      readiness.set('cluster_joined', true, `no seed of ${seeds.length} has answered yet: this node is the cluster until one does, and keeps joining`);
      logger.info({ seeds }, 'no seed answered the join: this node is the cluster until one does');
      this.sync.catchUp.noSeedAnswered();
    };
    const firstJoinWait = setTimeout(alone, FIRST_JOIN_WAIT_MS).unref();
    void readiness
      .phase('join', () => this.member.join(seeds, { onUnanswered: alone }))
      .then((answered) => {
        if (!joined()) readiness.set('cluster_joined', true, `joined through ${answered} of ${seeds.length} seeds`);
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'cluster join stopped'))
      .finally(() => clearTimeout(firstJoinWait));
  }

  /**
   * A node that runs its cluster open (`cluster.insecure`) says so loudly and keeps saying so in its
   * readiness detail; advisory, as every node of such a cluster shares the condition.
   */
  private reportSecurity(): void {
    const { readiness, logger, config } = this.options;
    const by = this.transport.authenticatedBy;
    if (by !== undefined) {
      readiness.set('cluster_authenticated', true, `cluster traffic is authenticated by ${by}`, false);
      return;
    }
    const reason = `cluster.insecure is true: anyone who can reach ${config.cluster.bind} can join the cluster, read cached objects and purge or ban them`;
    readiness.set('cluster_authenticated', false, reason, false);
    logger.error({ transport: config.cluster.transport }, `cluster traffic is NOT authenticated: ${reason}. Set cluster.secret.`);
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
    return this.mode === 'strong' ? (this.member.ring.owner(placementKey(key)) ?? null) : null;
  }

  peers(): Peer[] {
    return this.member.members().map((m) => peerView(m, this.mode, this.shares));
  }

  /** Every member's traffic and tiers, read now (this node's own, the others' by `/v1/peer/metrics`). */
  memberMetrics(): Promise<MemberMetrics[]> {
    return this.metricsReader.readAll();
  }

  ringStats(url?: string): RingStats {
    const ring = this.member.ring;
    return {
      mode: this.mode,
      members: ring.members.length,
      own_share: this.mode === 'strong' ? this.shares.of(this.member.localMember.name) : 0,
      checksum: String(this.member.checksum()),
      version: ring.version,
      owner: url === undefined ? null : this.ownerOf(keyOfUrl(url) ?? url),
    };
  }

  /** Leaves gracefully (peers learn at once rather than by failure detection), then stops. */
  async stop(): Promise<void> {
    this.sync.stop();
    this.guard.stop();
    await this.member.leave({ timeoutMs: 1_000 }).catch(() => undefined);
    await this.member.stop();
    await this.peerFetcher?.close();
    await this.logStore?.close();
  }
}
