// The data side of a node whose data plane runs in worker threads, as its main thread sees it: the
// threads are started over the node's hot tier and warm tier (workers/data-plane-workers.ts), the
// cluster member's ring and peers are relayed to them, and background refresh runs here, fed by the
// hits they report. Peer fetch's owner side answers fresh entries from the shared hot tier and hands
// the rest to the key's home thread, over its socket, as that thread's siblings do.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackgroundRefresher } from '../../refresh/background-refresher.js';
import { FillLayer } from '../../fill/fill-layer.js';
import { registerFillCounters } from '../../fill/fill-counters.js';
import { freshEntry } from '../../proxy/stored-lookup.js';
import { homeThreadOf, siblingSocket } from '../../proxy/home-routing.js';
import type { SharedHotStore } from '../../store/shared-hot/shared-hot-store.js';
import type { UpstreamPool } from '../../upstream/upstream-pool.js';
import { DataPlaneWorkers } from '../workers/data-plane-workers.js';
import { SharedWarmWrites } from '../workers/shared-warm-writes.js';
import { PeerRelay } from '../workers/peer-relay.js';
import { buildRouting, refreshSetup, type Routing } from '../routing.js';
import { reserveAddress } from '../listeners.js';
import { clearWorker, createNodeLimitsMemory, nodeLimits } from '../node-limits.js';
import type { ControlParts, DataSide, StartNodeOptions } from './data-side.js';

const stdoutLines = { write: (line: string): void => void process.stdout.write(line) };

export function workerThreadsSide(threads: number, options: StartNodeOptions): DataSide {
  let workers: DataPlaneWorkers | undefined;
  let parts: ControlParts | undefined;
  let refresher: BackgroundRefresher | undefined;
  let refreshes: { fills: FillLayer; routing: Routing } | undefined;
  let siblingDir = '';
  const limitsMemory = createNodeLimitsMemory(threads);
  const limits = nodeLimits(limitsMemory, 0);
  const siblingToken = randomBytes(16).toString('hex');
  return {
    replicas: { apply: (invalidation) => workers?.replicas().apply(invalidation) ?? Promise.resolve(0) },
    threads: {
      threadIds: () => workers?.supervisor.threadIds() ?? [],
      terminate: async (slot) => {
        await workers?.supervisor.terminate(slot);
      },
      get restarts() {
        return workers?.restarts ?? 0;
      },
    },
    async build(control) {
      parts = control;
      const { firstConfig: config, cache, invalidator, cluster, warm, logger, teardown } = control;
      // The threads' sockets live in a directory only this user reads (mkdtemp makes it 0700).
      siblingDir = await mkdtemp(join(tmpdir(), 'svc-'));
      const directory = siblingDir;
      teardown.add(() => rm(directory, { recursive: true, force: true }));
      workers = new DataPlaneWorkers(
        {
          workers: threads,
          config: control.config,
          env: options.env ?? process.env,
          clock: options.clock?.memory,
          output: options.workerOutput ?? stdoutLines,
          hot: cache.hot as SharedHotStore,
          listen: config.listen,
          siblingDir,
          siblingToken,
          limits: limitsMemory,
          serveGate: cluster?.gate.buffer,
          drainFlag: control.drainFlag.buffer,
          tracingBatch: options.tracingBatch,
          certificates: () => control.certificates.data(),
          onWorkerExit: (slot, threadId) => clearWorker(limits, slot, threadId),
        },
        logger,
      );
      const started = workers;
      control.certificates.onDataChange((certificates) => started.setCertificates(certificates));
      // The threads read the warm tier directly and send their changes here, its one writer.
      if (warm) workers.shareWarm(warm, new SharedWarmWrites({ warm, admissible: (entry) => invalidator.admissible(entry), logger }));
      // Strong mode: they learn the ring from this member and ask owners through it.
      if (cluster?.peerFetcher) workers.relayPeers(new PeerRelay(cluster.member, cluster.peerFetcher.hopToken));
      if (refreshSetup(config).length === 0) return;
      // Refreshes are fills of this thread's own, on pools of its own, stored in the shared tiers.
      const routing = buildRouting(config, limits);
      teardown.add(async () => {
        // After the refresher stopped (teardown runs newest first), which aborted its fetches.
        await Promise.all([...refreshes!.routing.pools.values()].map((pool: UpstreamPool) => pool.close(0)));
      });
      const fills = new FillLayer({
        cache,
        gate: invalidator,
        now: control.now,
        maxObjectBytes: config.max_object_bytes,
        writeIdleTimeoutMs: config.client_write_idle_timeout,
        counters: registerFillCounters(control.metrics.registry),
      });
      refreshes = { fills, routing };
      refresher = new BackgroundRefresher({
        cache,
        routes: routing.refreshRoutes,
        registry: control.metrics.registry,
        logger,
        now: control.now,
        fills,
        isInvalidated: (entry) => invalidator.isInvalidated(entry),
        persistDirectory: config.warm ? join(config.warm.path, 'refresh') : undefined,
      });
      await refresher.start();
      const running = refresher;
      teardown.add(() => running.stop());
      workers.onServed((report) => {
        for (const hit of report.hits) running.noteServed(hit);
      });
    },
    async start(onServingChange, handed) {
      const started = workers!;
      let url: string;
      if (handed !== undefined) url = await started.start(handed.address, handed.fds);
      else {
        const reserved = await reserveAddress('data-plane', parts!.firstConfig.listen);
        url = await started.start(reserved.address).finally(() => reserved.release());
      }
      parts!.teardown.add(() => started.stop());
      started.onServingChange((serving) => onServingChange(serving, threads));
      return url;
    },
    freshEntry: (key, requestHeaders) =>
      parts === undefined
        ? undefined
        : freshEntry(
            {
              cache: parts.cache,
              now: parts.now,
              isInvalidated: (entry) => parts!.invalidator.isInvalidated(entry),
              servable: parts.cluster && ((entry) => parts!.cluster!.servable(entry)),
            },
            key,
            requestHeaders,
          ),
    dataPlaneFor: (key) => `unix:${siblingSocket(siblingDir, homeThreadOf(key, threads))}`,
    drain: async () => {
      await workers?.drain();
      return true;
    },
    listeningFds: () => workers!.listeningFds(),
    stopAccepting: (timeoutMs) => workers!.stopAccepting(timeoutMs),
    reloaded: async () => {
      await workers?.reload(parts!.config());
    },
    exposition: (own, openMetrics) => workers!.exposition(own, openMetrics),
    metricsSource: (own) => workers!.metricsSource(own),
    get refresher() {
      return refresher;
    },
    gatherHits: () => workers?.gatherServed() ?? Promise.resolve(),
    reloadParts: () => ({ fills: refreshes?.fills, routing: refreshes?.routing, peerFetcher: parts?.cluster?.peerFetcher }),
  };
}
