// What of a running node a configuration reload changes (docs/operations.md "Reload"): routes and
// pools, the hot tier's bound, the largest stored body, the admin token and the access log's query
// strings. What the node sets up once (listeners, the warm tier, the cluster, tracing, background
// refresh's routes) is restart-only, each with the reason the refusal quotes.
import { isDeepStrictEqual } from 'node:util';
import type { AdminToken } from '../../admin/admin-token.js';
import { resolveAdminToken } from '../../admin/admin-token.js';
import type { CacheFlow } from '../../proxy/cache-flow.js';
import type { DataPlaneDeps } from '../../proxy/data-plane-server.js';
import type { AccessLog } from '../../observe/access-log.js';
import type { Logger } from '../../observe/logger.js';
import type { BackgroundRefresher } from '../../refresh/background-refresher.js';
import type { HotStore } from '../../store/hot-store.js';
import { buildRouting, refreshSetup, type Routing } from '../routing.js';
import { ReloadRefusedError, type ConfigReloader } from './config-reloader.js';

export interface ReloadableParts {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** The hot tier's bound; a data-plane worker resizes its share. */
  hot: Pick<HotStore, 'resize'>;
  cacheFlow: CacheFlow;
  refresher: BackgroundRefresher | undefined;
  /** The data plane reads `routes` and `pools` from here on every request. */
  dataPlane: Pick<DataPlaneDeps, 'routes' | 'pools'>;
  routing: Routing;
  /** The live token: the admin API's checks read it on every request. */
  adminToken: AdminToken;
  accessLog: AccessLog;
}

export function registerNodeReloadSteps(reloader: ConfigReloader, parts: ReloadableParts): void {
  reloader.restartOnly('listen', 'the data-plane listener is bound at startup');
  reloader.restartOnly('admin.listen', 'the admin listener is bound at startup');
  reloader.restartOnly('admin.pprof_enabled', 'the profiling endpoints are mounted at startup');
  reloader.restartOnly('warm', 'the warm tier is locked, opened and indexed at startup');
  reloader.restartOnly('cluster', 'the node joins the cluster with its identity, transport and mode at startup (a mode change restarts the whole cluster, spec §1.4)');
  reloader.restartOnly('hop_limit', 'peer fetch is set up when the node joins the cluster');
  reloader.restartOnly('tracing', 'tracing is set up at startup');
  reloader.restartOnly('workers', 'the data-plane workers are forked at startup');

  let routing = parts.routing;
  reloader.register({
    keys: ['routes', 'pools', 'stale_if_unreachable'],
    prepare(next, previous) {
      if (!isDeepStrictEqual(refreshSetup(next), refreshSetup(previous))) {
        throw new ReloadRefusedError([
          'routes[].refresh_before_expiry and routes[].refresh_min_hits (and the names of refreshed routes) cannot change without a restart: background refresh is set up at startup',
        ]);
      }
      return () => {
        const built = buildRouting(next, { config: previous, routing });
        routing = built;
        parts.dataPlane.routes = built.routes;
        parts.dataPlane.pools = built.pools;
        parts.refresher?.reconfigure({ routes: built.refreshRoutes });
        // Requests already sent on a retired pool finish first: undici's close waits for them.
        for (const pool of built.retired) {
          pool.close().catch((error: unknown) => parts.logger.warn({ err: error, pool: pool.name }, 'closing a retired upstream pool failed'));
        }
      };
    },
  });

  reloader.register({
    keys: ['hot_max_bytes'],
    prepare: (next) => () => parts.hot.resize(next.hot_max_bytes),
  });

  reloader.register({
    keys: ['max_object_bytes'],
    prepare: (next) => () => {
      parts.cacheFlow.setMaxObjectBytes(next.max_object_bytes);
      parts.refresher?.reconfigure({ maxObjectBytes: next.max_object_bytes });
    },
  });

  reloader.register({
    keys: ['admin.token'],
    prepare(next) {
      const token = resolveAdminToken(parts.env, next.admin.token);
      return () => {
        if (token.source === 'env') {
          parts.logger.warn('admin.token changed, but SVC_ADMIN_TOKEN takes precedence: the admin token is unchanged');
          return;
        }
        Object.assign(parts.adminToken, token);
        // Spec §5.2: a generated token is logged once so that an operator can use it.
        if (token.source === 'generated') parts.logger.warn({ admin_token: token.value }, 'admin.token removed: generated one for this run');
      };
    },
  });

  reloader.register({
    keys: ['log.access_query'],
    prepare: (next) => () => parts.accessLog.setQueryMode(next.log.access_query),
  });
}
