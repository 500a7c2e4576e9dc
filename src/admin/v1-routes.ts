// The token-protected admin API of spec §4.1: the four invalidation operations, the auth check,
// stats, the running configuration, the cache debug view, the recent invalidations, undrain, (when
// the CDN is configured) the CDN status and (when enabled) the profiling endpoints. Bodies are the
// shared wire types of src/api.
import type { Config } from '../config/index.js';
import { redactConfig } from '../config/index.js';
import type { InvalidationResult, Invalidator } from '../invalidation/invalidator.js';
import { BanLimitError, InvalidBanError, InvalidUrlError } from '../invalidation/errors.js';
import { ABSOLUTE_URL_EXPECTATION, isAbsoluteHttpUrl } from '../api/absolute-url.js';
import { PURGE_BATCH_MAX_URLS } from '../api/limits.js';
import type { CacheCheckProvider, NodeStatsProvider } from '../api/providers.js';
import {
  banRequestSchema,
  purgeBatchRequestSchema,
  purgeRequestSchema,
  refreshRequestSchema,
  type BanRequest,
} from '../api/requests.js';
import {
  STATUS,
  type AuthCheckResponse,
  type BanResponse,
  type CdnStatusResponse,
  type PurgeBatchResponse,
  type PurgeResponse,
  type RecentInvalidationsResponse,
  type RefreshResponse,
  type StatsResponse,
} from '../api/responses.js';
import type { AdminToken } from './admin-token.js';
import { ApiError } from '../api/api-error.js';
import { createTokenCheck, requireToken, type AuthFailureGuard } from './auth.js';
import { mountBansRoute } from './bans-route.js';
import { mountUndrainRoute } from './drain-routes.js';
import type { DashboardSessions } from './dashboard/dashboard-session.js';
import { acceptingSession } from './dashboard/session-auth.js';
import { InvalidRequestError, readJsonBody } from './json-body.js';
import { sendJson } from './json-response.js';
import { mountPprofRoutes } from './pprof-routes.js';
import type { AdminRouter } from './router.js';

export interface V1RouteDeps {
  invalidator: Invalidator;
  /**
   * Whether a new ban may enter (the bound on active bans, the fields' lengths): throws
   * InvalidBanError or BanLimitError. Asked of this node's engine, where a ban enters the cluster.
   */
  admitBan: (spec: BanRequest) => void;
  /** The live admin token (a reload may replace it). `/v1/auth/check` exists only while it comes from
   * SVC_ADMIN_TOKEN or admin.token rather than being generated (spec §5 item 4). */
  adminToken: AdminToken;
  /** The running configuration (a reload replaces it). */
  config: () => Config;
  stats: NodeStatsProvider;
  cacheCheck: CacheCheckProvider;
  /** `admin.pprof_enabled`: mounts `/debug/pprof/*`. */
  pprofEnabled: boolean;
  /** The CDN propagation's status; `GET /v1/cdn/status` exists only with it (spec §4.1). */
  cdnStatus?: (() => CdnStatusResponse) | undefined;
  /** Dashboard sessions, accepted in place of the bearer token (with their CSRF token). */
  sessions?: DashboardSessions;
  /** Wall clock, ms since the epoch (ages in `GET /v1/bans`). */
  now: () => number;
  /** Limits, counts and logs wrong tokens (`admin.auth_failure_limit`, `admin.auth_failure_window`). */
  authGuard: AuthFailureGuard;
  /** Puts a drained node back in service (`POST /v1/undrain`). */
  undrain: () => Promise<void>;
}

export class BatchTooLargeError extends ApiError {
  constructor(size: number) {
    super(413, 'batch_too_large', `the batch has ${size} URLs; the limit is ${PURGE_BATCH_MAX_URLS} per request`);
  }
}

/** `empty_ban` and `invalid_regex` keep the Invalidator's code and message (which says where). */
export class BanRejectedError extends ApiError {
  constructor(cause: InvalidBanError) {
    super(400, cause.code, cause.message);
  }
}

/**
 * `ban_limit_reached`: 429, because the condition passes with time (the oldest ban expires) rather
 * than with the server's health; Retry-After says when the oldest ban expires.
 */
export class TooManyBansError extends ApiError {
  constructor(cause: BanLimitError) {
    super(429, cause.code, cause.message, { 'Retry-After': String(Math.max(1, Math.ceil(cause.retryAfterMs / 1000))) });
  }
}

/**
 * The schema already accepts only absolute http(s) URLs; should the engine's stricter key rules still
 * refuse one, that is the client's 400 as well, not a 500.
 */
async function rejectingInvalidUrl<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidUrlError) throw new InvalidRequestError(`url: ${error.message}`);
    throw error;
  }
}

/** What the cluster's fan-out did, in a strong-mode cluster (see responses.ts). */
function fanOutFields(result: InvalidationResult): { peers_confirmed?: number; peers_missed?: number; peers_missed_names?: string[] } {
  if (result.peers === undefined) return {};
  return { peers_confirmed: result.peers.confirmed, peers_missed: result.peers.missed, peers_missed_names: result.peers.missedNames };
}

export function mountV1Routes(router: AdminRouter, deps: V1RouteDeps): void {
  const { invalidator } = deps;
  const check = acceptingSession(createTokenCheck(deps.adminToken, deps.authGuard), deps.sessions);

  router.on(
    'POST',
    '/v1/purge',
    requireToken(check, async (request, response) => {
      const { url } = await readJsonBody(request.raw, purgeRequestSchema);
      const result = await rejectingInvalidUrl(() => invalidator.purge(url));
      sendJson(response, 200, { status: STATUS.purged, count: result.count, keys: result.keys, ...fanOutFields(result) } satisfies PurgeResponse);
    }),
  );

  router.on(
    'POST',
    '/v1/purge/batch',
    requireToken(check, async (request, response) => {
      const { urls } = await readJsonBody(request.raw, purgeBatchRequestSchema);
      if (urls.length > PURGE_BATCH_MAX_URLS) throw new BatchTooLargeError(urls.length);
      const result = await invalidator.purgeBatch(urls);
      sendJson(response, 200, { status: STATUS.purged, count: result.count, failed: result.failed, ...fanOutFields(result) } satisfies PurgeBatchResponse);
    }),
  );

  router.on(
    'POST',
    '/v1/ban',
    requireToken(check, async (request, response) => {
      const spec = await readJsonBody(request.raw, banRequestSchema);
      let result: InvalidationResult;
      try {
        deps.admitBan(spec);
        result = await invalidator.ban(spec);
      } catch (error) {
        if (error instanceof InvalidBanError) throw new BanRejectedError(error);
        if (error instanceof BanLimitError) throw new TooManyBansError(error);
        throw error;
      }
      sendJson(response, 200, { status: STATUS.banned, count: result.count, ...fanOutFields(result) } satisfies BanResponse);
    }),
  );

  router.on(
    'POST',
    '/v1/refresh',
    requireToken(check, async (request, response) => {
      const { url } = await readJsonBody(request.raw, refreshRequestSchema);
      const result = await rejectingInvalidUrl(() => invalidator.refresh(url));
      sendJson(response, 200, { status: STATUS.refreshed, count: result.count, keys: result.keys, ...fanOutFields(result) } satisfies RefreshResponse);
    }),
  );

  router.on('GET', '/v1/auth/check', (request, response) => {
    if (deps.adminToken.source === 'generated') throw new ApiError(404, 'not_found', `no admin endpoint at ${request.path}`);
    check(request.raw);
    sendJson(response, 200, { status: STATUS.ok } satisfies AuthCheckResponse);
  });

  router.on(
    'GET',
    '/v1/stats',
    requireToken(check, async (request, response) => {
      const url = request.query.get('url') ?? undefined;
      if (url !== undefined && !isAbsoluteHttpUrl(url)) throw new InvalidRequestError(`url: expected ${ABSOLUTE_URL_EXPECTATION}, got ${JSON.stringify(url)}`);
      const node = await deps.stats(url);
      const body: StatsResponse = {
        ...node,
        bans: { active: invalidator.activeBans().length },
        invalidations: invalidator.counts(),
      };
      sendJson(response, 200, body);
    }),
  );

  router.on(
    'GET',
    '/v1/config',
    requireToken(check, (_request, response) => sendJson(response, 200, redactConfig(deps.config()))),
  );

  router.on(
    'GET',
    '/v1/debug/cachecheck',
    requireToken(check, async (request, response) => {
      const url = request.query.get('url');
      if (url === null) throw new InvalidRequestError(`url: the query parameter is required (${ABSOLUTE_URL_EXPECTATION})`);
      if (!isAbsoluteHttpUrl(url)) throw new InvalidRequestError(`url: expected ${ABSOLUTE_URL_EXPECTATION}, got ${JSON.stringify(url)}`);
      sendJson(response, 200, await deps.cacheCheck(url));
    }),
  );

  router.on(
    'GET',
    '/v1/invalidations/recent',
    requireToken(check, (_request, response) =>
      sendJson(response, 200, { invalidations: invalidator.recent() } satisfies RecentInvalidationsResponse),
    ),
  );

  const { cdnStatus } = deps;
  if (cdnStatus) {
    router.on('GET', '/v1/cdn/status', requireToken(check, (_request, response) => sendJson(response, 200, cdnStatus())));
  }
  mountBansRoute(router, check, invalidator, deps.now);
  mountUndrainRoute(router, check, deps.undrain);

  if (deps.pprofEnabled) mountPprofRoutes(router, check);
}
