// The data side of a node that runs in one thread (`workers: 1`): the data plane is built here, beside
// the control plane, over the same cache; background refresh runs on its fills.
import { join } from 'node:path';
import { BackgroundRefresher } from '../../refresh/background-refresher.js';
import { buildDataPlane, type DataPlane } from '../data-plane.js';
import { refreshSetup } from '../routing.js';
import { createNodeLimitsMemory, nodeLimits } from '../node-limits.js';
import { registryExposition } from '../workers/worker-metrics.js';
import type { ControlParts, DataSide } from './data-side.js';
import { DRAIN_TIMEOUT_MS } from '../drain-timeout.js';
import { reserveAddress } from '../listeners.js';

export function singleThreadSide(): DataSide {
  let plane: DataPlane | undefined;
  let refresher: BackgroundRefresher | undefined;
  let parts: ControlParts | undefined;
  let dataUrl = '';
  return {
    replicas: undefined,
    threads: undefined,
    async build(control) {
      parts = control;
      const { firstConfig: config, cache, invalidator, cluster, teardown } = control;
      const refreshes = refreshSetup(config).length > 0;
      plane = await buildDataPlane({
        config,
        logger: control.logger,
        now: control.now,
        metrics: control.metrics,
        cache,
        invalidator,
        isDraining: control.drainFlag.isDraining,
        servable: cluster && ((entry) => cluster.servable(entry)),
        peer: cluster?.peerFetcher,
        onServedFromCache: refreshes ? (entry, request, route) => refresher?.onServedFromCache(entry, request, route) : undefined,
        tracingBatch: control.options.tracingBatch,
        limits: nodeLimits(createNodeLimitsMemory(0), 0),
        certificates: control.certificates.data(),
        teardown,
      });
      const built = plane;
      control.certificates.onDataChange((certificates) => built.tls?.replace(certificates));
      if (!refreshes) return;
      refresher = new BackgroundRefresher({
        cache,
        routes: plane.routing.refreshRoutes,
        registry: control.metrics.registry,
        logger: control.logger,
        now: control.now,
        fills: plane.fills,
        isInvalidated: (entry) => invalidator.isInvalidated(entry),
        // What is popular is kept beside the warm tier, so it survives a restart as the entries do.
        persistDirectory: config.warm ? join(config.warm.path, 'refresh') : undefined,
      });
      await refresher.start();
      const started = refresher;
      teardown.add(() => started.stop());
    },
    async start(onServingChange, handed) {
      // SO_REUSEPORT, as the threads of a node of several do, after the same check that the port is
      // free: an upgrade's successor opens its own socket beside this one's when it runs more threads,
      // or when it was handed none (SVC_NODE_INTERNALS=off).
      if (handed === undefined) {
        const reserved = await reserveAddress('data-plane', parts!.firstConfig.listen);
        dataUrl = await plane!.listen(reserved.address, true).finally(() => reserved.release());
      }
      else if (handed.fds.length === 0) dataUrl = await plane!.listen(handed.address, true);
      else for (const fd of handed.fds) dataUrl = await plane!.listen(handed.address, true, fd);
      onServingChange(1, 1);
      return dataUrl;
    },
    freshEntry: (key, requestHeaders) => plane?.cacheFlow.freshEntry(key, requestHeaders),
    dataPlaneFor: () => dataUrl,
    drain: () => plane?.inFlight.idle(DRAIN_TIMEOUT_MS) ?? Promise.resolve(true),
    listeningFds: () => Promise.resolve(plane!.listeningFds()),
    stopAccepting: (timeoutMs) => plane!.stopAccepting(timeoutMs),
    reloaded: () => Promise.resolve(),
    exposition: (own, openMetrics) => registryExposition(own, openMetrics),
    metricsSource: (own) => own,
    get refresher() {
      return refresher;
    },
    // Hits are counted as they are served, in this thread.
    gatherHits: () => Promise.resolve(),
    // This thread is the only one that serves: it stores in the tier once the cache has let it join.
    reloadParts: () => ({
      fills: plane!.fills,
      peerFetcher: parts!.cluster?.peerFetcher,
      dataPlane: plane!.deps,
      routing: plane!.routing,
      accessLog: plane!.accessLog,
    }),
  };
}
