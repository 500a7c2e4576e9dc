// What of a running node a configuration reload changes (docs/operations.md "Reload"): routes and
// pools, the hot tier's bound, the largest stored body, the admin token, the access log's query
// strings, the trusted proxies, the bound on active bans and the TLS certificates (node-certificates.ts).
// What the node sets up once (listeners and their limits, the warm tier, the cluster, tracing,
// background refresh's routes, the wrong-token limiter) is restart-only, each with the reason the
// refusal quotes.
import { isDeepStrictEqual } from 'node:util';
import type { AdminToken } from '../../admin/admin-token.js';
import { resolveAdminToken } from '../../admin/admin-token.js';
import type { FillLayer } from '../../fill/fill-layer.js';
import type { PeerFetcher } from '../../clustering/peer-fetcher.js';
import type { DataPlaneDeps } from '../../proxy/data-plane-server.js';
import { TrustedProxies } from '../../edge/trusted-proxies.js';
import type { AccessLog } from '../../observe/access-log.js';
import type { Logger } from '../../observe/logger.js';
import type { BackgroundRefresher } from '../../refresh/background-refresher.js';
import type { HotStore } from '../../store/hot-store.js';
import type { InvalidationEngine } from '../../invalidation/create-invalidator.js';
import { buildRouting, refreshSetup, type Routing } from '../routing.js';
import { ReloadRefusedError } from '../../config/index.js';
import type { ConfigReloader } from './config-reloader.js';
import type { NodeCertificates } from '../node-certificates.js';

export interface ReloadableParts {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** The hot tier's bound: resized by the thread that made the tier (the main one). */
  hot?: Pick<HotStore, 'resize'> | undefined;
  /** Where `max_object_bytes` is read when a fill starts (none in a main thread without refreshes). */
  fills?: FillLayer | undefined;
  /** Strong mode: refuses to send peers objects above `max_object_bytes`. */
  peerFetcher?: PeerFetcher | undefined;
  refresher?: BackgroundRefresher | undefined;
  /** The data plane reads `routes`, `pools` and `trustedProxies` from here on every request (a thread that serves it). */
  dataPlane?: Pick<DataPlaneDeps, 'routes' | 'pools' | 'trustedProxies'> | undefined;
  /** The pools of this thread (its data plane's, or background refresh's). */
  routing?: Routing | undefined;
  /** The live token: the admin API's checks read it on every request (the main thread's). */
  adminToken?: AdminToken | undefined;
  accessLog?: AccessLog | undefined;
  /** Admits new bans up to `max_active_bans` (the main thread's engine). */
  invalidator?: Pick<InvalidationEngine, 'setMaxActiveBans'> | undefined;
  /** The TLS listeners' certificates (the main thread's), read again at every reload. */
  certificates?: NodeCertificates | undefined;
}

export function registerNodeReloadSteps(reloader: ConfigReloader, parts: ReloadableParts): void {
  reloader.restartOnly('listen', 'the data-plane listener is bound at startup');
  reloader.restartOnly('admin.listen', 'the admin listener is bound at startup');
  reloader.restartOnly('admin.pprof_enabled', 'the profiling endpoints are mounted at startup');
  reloader.restartOnly('warm', 'the warm tier is locked and opened at startup');
  reloader.restartOnly('cluster', 'the node joins the cluster with its identity, transport and mode at startup (a mode change restarts the whole cluster, spec §1.4)');
  reloader.restartOnly('hop_limit', 'peer fetch is set up when the node joins the cluster');
  reloader.restartOnly(
    'client_write_idle_timeout',
    'the fill layer and the peer-fetch streams take the write-idle timeout at startup, and fills already streaming keep theirs',
  );
  reloader.restartOnly('tracing', 'tracing is set up at startup');
  reloader.restartOnly(
    'limits',
    'the listeners are created with their header, body and keep-alive limits at startup, and every upstream pool shares the per-client budget made then',
  );
  reloader.restartOnly('admin.auth_failure_limit', 'the wrong-token limiter is set up at startup, and one rebuilt would forget the addresses it limits');
  reloader.restartOnly('admin.auth_failure_window', 'the wrong-token limiter is set up at startup, and one rebuilt would forget the addresses it limits');
  reloader.restartOnly('workers', 'the data-plane threads are started at startup');

  let routing = parts.routing;
  const adminToken = parts.adminToken;
  reloader.register({
    keys: ['routes', 'pools', 'stale_if_unreachable'],
    prepare(next, previous) {
      if (!isDeepStrictEqual(refreshSetup(next), refreshSetup(previous))) {
        throw new ReloadRefusedError([
          'routes[].refresh_before_expiry and routes[].refresh_min_hits (and the names of refreshed routes) cannot change without a restart: background refresh is set up at startup',
        ]);
      }
      return () => {
        if (routing === undefined) return;
        const built = buildRouting(next, routing.limits, { config: previous, routing });
        routing = built;
        if (parts.dataPlane) {
          parts.dataPlane.routes = built.routes;
          parts.dataPlane.pools = built.pools;
        }
        parts.refresher?.reconfigure({ routes: built.refreshRoutes });
        // Requests already sent on a retired pool finish first: undici's close waits for them.
        for (const pool of built.retired) {
          pool.close().catch((error: unknown) => parts.logger.warn({ err: error, pool: pool.name }, 'closing a retired upstream pool failed'));
        }
      };
    },
  });

  // Whom the data plane believes about the client's address, scheme and host: read per request.
  reloader.register({
    keys: ['trusted_proxies'],
    prepare(next) {
      const trusted = new TrustedProxies(next.trusted_proxies);
      return () => {
        if (parts.dataPlane) parts.dataPlane.trustedProxies = trusted;
      };
    },
  });

  reloader.register({
    keys: ['hot_max_bytes'],
    prepare: (next) => () => parts.hot?.resize(next.hot_max_bytes),
  });

  reloader.register({
    keys: ['max_object_bytes'],
    prepare: (next) => () => {
      parts.fills?.setMaxObjectBytes(next.max_object_bytes);
      parts.peerFetcher?.setMaxObjectBytes(next.max_object_bytes);
    },
  });

  reloader.register({
    keys: ['admin.token'],
    prepare(next) {
      const token = resolveAdminToken(parts.env, next.admin.token);
      return () => {
        if (adminToken === undefined) return;
        if (token.source === 'env') {
          parts.logger.warn('admin.token changed, but SVC_ADMIN_TOKEN takes precedence: the admin token is unchanged');
          return;
        }
        Object.assign(adminToken, token);
        // Spec §5.2: a generated token is logged once so that an operator can use it.
        if (token.source === 'generated') parts.logger.warn({ admin_token: token.value }, 'admin.token removed: generated one for this run');
      };
    },
  });

  // Asked of each new ban from an operator; the bans in force stay whatever the new bound.
  reloader.register({
    keys: ['max_active_bans'],
    prepare: (next) => () => parts.invalidator?.setMaxActiveBans(next.max_active_bans),
  });

  reloader.register({
    keys: ['log.access_query'],
    prepare: (next) => () => parts.accessLog?.setQueryMode(next.log.access_query),
  });

  // Certificates are read by the main thread, which sends the data plane's to every thread that
  // serves it: a worker thread has nothing of its own to change for these keys.
  for (const step of parts.certificates?.reloadSteps() ?? [{ keys: ['tls', 'admin.tls'], prepare: () => () => undefined }]) reloader.register(step);
}
