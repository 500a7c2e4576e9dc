// A data-plane worker thread of a node: it serves the data-plane port (SO_REUSEPORT, beside the
// node's other threads) from the node's one hot tier, reads the warm tier the main thread owns, and
// answers on its own Unix socket what its sibling threads hand it (the keys it is home for,
// home-routing.ts). It has no admin listener, cluster member or CDN propagation: those are the main
// thread's, which calls it (thread-messages.ts) to apply invalidations, drain, reload and report.
import { ServeGate } from '../../clustering/serve-gate.js';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../observe/logger.js';
import { NodeMetrics } from '../../observe/metrics.js';
import { createHotStore, type HotMemory } from '../../store/hot-store.js';
import { WarmReader } from '../../store/warm/warm-reader.js';
import { TieredCache } from '../../store/tiered-cache.js';
import { createInvalidator, type InvalidationEngine } from '../../invalidation/create-invalidator.js';
import { SiblingRouting, siblingSocket } from '../../proxy/home-routing.js';
import { buildDataPlane } from '../data-plane.js';
import { SharedClock } from '../shared-clock.js';
import { DrainFlag } from '../drain-flag.js';
import { Teardown } from '../teardown.js';
import { pinTickObjectShape } from '../tick-object-shape.js';
import { ConfigReloader } from '../reload/config-reloader.js';
import { registerNodeReloadSteps } from '../reload/node-reload-steps.js';
import { refreshSetup } from '../routing.js';
import { nodeLimits, workerColumn } from '../node-limits.js';
import { DRAIN_TIMEOUT_MS } from '../drain-timeout.js';
import type { MainChannel } from '../workers/main-channel.js';
import type { WorkerStart } from '../workers/data-plane-workers.js';
import { WorkerWarmTier } from '../workers/worker-warm-tier.js';
import { RelayedClusterMember } from '../workers/relayed-cluster-member.js';
import { createWorkerPeerFetcher } from '../workers/worker-peer-fetcher.js';
import { ServedReporter } from '../workers/served-reporter.js';
import type { ListenerCertificate } from '../../tls/listener-certificates.js';

export interface WorkerNode {
  readonly dataUrl: string;
  readonly invalidator: InvalidationEngine;
  readonly registry: Registry;
  readonly warm: WorkerWarmTier | undefined;
  /** Resolves once this thread's in-flight requests are done (or the drain timed out). */
  drain(): Promise<void>;
  listeningFds(): number[];
  stopAccepting(timeoutMs: number): Promise<boolean>;
  reload(next: Config): Promise<unknown>;
  setCertificates(certificates: readonly ListenerCertificate[]): void;
  report(): void;
  stop(): Promise<void>;
}

/** Slack beyond the origin's own timeouts before a home thread's silence is given up on. */
const SIBLING_TIMEOUT_MARGIN_MS = 1_000;

export async function startWorkerNode(start: WorkerStart & { slot: number }, channel: MainChannel, logger: Logger): Promise<WorkerNode> {
  const teardown = new Teardown();
  try {
    return await openWorkerNode(start, channel, logger, teardown);
  } catch (error) {
    await teardown.run().catch(() => undefined);
    throw error;
  }
}

async function openWorkerNode(start: WorkerStart & { slot: number }, channel: MainChannel, logger: Logger, teardown: Teardown): Promise<WorkerNode> {
  const { config } = start;
  let current = config;
  const now = start.clock === undefined ? Date.now : new SharedClock(start.clock).now;
  await pinTickObjectShape();
  // The hot tier's figures are the main thread's to report: the tier is one, and a sum would count it per thread.
  const metrics = new NodeMetrics();
  // The warm tier is the main thread's, which opened it before starting this one: read here, written there.
  const warm = config.warm ? new WorkerWarmTier(WarmReader.open(config.warm.path), (write) => channel.sendWarm(write)) : undefined;
  if (warm) teardown.add(() => warm.close());
  const hot = createHotStore({ maxBytes: config.hot_max_bytes, memory: start.hotMemory as HotMemory, onEvict: (entry) => cache.demote(entry) });
  const cache = new TieredCache(hot, warm, 'main thread');
  // What this thread checks its lookups and fills against; the main thread's engine keeps the journal
  // (read here at start: the shared tiers may still hold what its bans and purges hide) and evicts.
  const invalidator = createInvalidator({
    cache,
    logger,
    now,
    replayFrom: config.warm ? join(config.warm.path, 'invalidation') : undefined,
    maxActiveBans: config.max_active_bans,
    evictsEagerly: false,
  });
  await invalidator.start();
  teardown.add(() => invalidator.stop());

  // A clustered node's gate, written by the main thread (ClusterNode.servable).
  const servable = start.serveGate && ServeGate.over(start.serveGate).servable;
  const peer = config.cluster?.mode === 'strong' ? await relayedPeers(config, channel, metrics, now, () => dataUrl) : undefined;
  if (peer) teardown.add(() => peer.close());
  const responseTimeoutMs = Math.max(...config.pools.map((pool) => pool.connect_timeout + pool.response_timeout));
  const home = new SiblingRouting({
    slot: start.slot,
    workers: start.workers,
    directory: start.siblingDir,
    token: start.siblingToken,
    timeoutMs: responseTimeoutMs + SIBLING_TIMEOUT_MARGIN_MS,
    now,
  });
  teardown.add(() => home.close());
  const reporter = refreshSetup(config).length > 0 ? new ServedReporter((report) => channel.sendServed(report)) : undefined;
  if (reporter) teardown.add(() => reporter.close());
  const plane = await buildDataPlane({
    config,
    logger,
    now,
    metrics,
    cache,
    invalidator,
    isDraining: DrainFlag.over(start.drainFlag).isDraining,
    servable,
    peer,
    home,
    onServedFromCache: reporter?.hook,
    limits: nodeLimits(start.limits, workerColumn(start.slot)),
    accessLog: start.accessLog,
    tracingBatch: start.tracingBatch,
    certificates: start.certificates,
    teardown,
  });
  await plane.listenInternal(siblingSocket(start.siblingDir, start.slot));
  // An upgrade's successor takes the sockets its predecessor handed over to this slot, if any.
  const urls = [];
  for (const fd of start.inherited) urls.push(await plane.listen(start.listen, true, fd));
  const dataUrl = urls[0] ?? (await plane.listen(start.listen, true));

  const reloader = new ConfigReloader();
  registerNodeReloadSteps(reloader, {
    logger,
    env: process.env,
    fills: plane.fills,
    peerFetcher: peer,
    dataPlane: plane.deps,
    routing: plane.routing,
    accessLog: plane.accessLog,
  });
  return {
    dataUrl,
    invalidator,
    registry: metrics.registry,
    warm,
    drain: async () => {
      await plane.inFlight.idle(DRAIN_TIMEOUT_MS);
    },
    listeningFds: () => plane.listeningFds(),
    stopAccepting: (timeoutMs) => plane.stopAccepting(timeoutMs),
    reload: async (next) => {
      const outcome = await reloader.reload(current, next);
      current = next;
      return outcome;
    },
    setCertificates: (certificates) => plane.tls?.replace(certificates),
    report: () => reporter?.flush(),
    stop: () => teardown.run(),
  };
}

/** Strong mode: the ring and the peers, reached through the main thread's cluster member. */
async function relayedPeers(config: Config, channel: MainChannel, metrics: NodeMetrics, now: () => number, dataUrl: () => string): Promise<ReturnType<typeof createWorkerPeerFetcher>> {
  const view = await channel.clusterView;
  const member = new RelayedClusterMember(config.cluster!.node_name, (peer, peerChannel, body, timeoutMs) => channel.askPeer(peer, peerChannel, body, timeoutMs));
  channel.onClusterView((next) => member.update(next));
  return createWorkerPeerFetcher(
    { member, hopToken: view.hopToken },
    {
      config: { ...config, cluster: config.cluster! },
      metrics,
      now,
      dataPlaneUrl: dataUrl,
      // A worker only asks owners; the main thread answers peers (from the shared tiers, or through a home thread).
      freshEntry: () => undefined,
    },
  );
}
