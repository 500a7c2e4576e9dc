// The operator dashboard on the admin listener (spec §1, §4.1): `/dashboard/` and its views behind a
// session, the login and logout forms that make and end sessions, the two static assets, and the JSON
// calls only the dashboard needs (the Overview's metrics summary, the Cluster view's members, the
// forms' validation).
// Everything else the dashboard shows it reads from the /v1/ API with its session.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Registry } from 'prom-client';
import { buildInfo } from '../../version/build-info.js';
import { ApiError } from '../../api/api-error.js';
import { createTokenCheck, requireToken, type AuthFailureGuard } from '../auth.js';
import { readBody, readJsonBody } from '../json-body.js';
import { sendJson } from '../json-response.js';
import type { AdminHandler, AdminRequest, AdminRouter } from '../router.js';
import { DashboardAssets } from './dashboard-assets.js';
import { CsrfRejectedError, SessionExpiredError, type DashboardSessions, type Session } from './dashboard-session.js';
import { formValidationRequestSchema, validateForm } from './form-validation.js';
import type { MemberMetrics } from '../../clustering/member-metrics.js';
import { summarizeMetrics, type TierCapacities } from './metrics-summary.js';
import {
  ASSETS_PATH,
  DASHBOARD_ROOT,
  DASHBOARD_VIEWS,
  LOGIN_PATH,
  LOGOUT_PATH,
  loginPage,
  refusedPage,
  viewPage,
  type LoginNotice,
} from './pages.js';
import { acceptingSession, checkSameOrigin, clearedSessionCookieHeader, sessionCookieHeader, sessionCookieValue } from './session-auth.js';

export const SUMMARY_PATH = '/dashboard/api/summary';
export const CLUSTER_PATH = '/dashboard/api/cluster';
export const VALIDATE_PATH = '/dashboard/api/validate';
/** A login or logout form is a token and a CSRF token: 8 KiB is plenty, and bounds what is buffered. */
const FORM_BODY_MAX_BYTES = 8 * 1024;

/**
 * Pages allow only their own script, style sheet and API calls: an injected tag could neither run
 * nor send data elsewhere, and no other site may frame the dashboard.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: under it a browser sends `Origin: null` with the page's own form posts.
  'referrer-policy': 'same-origin',
};

export interface DashboardRouteDeps {
  sessions: DashboardSessions;
  /** The admin token, read at each login so that a reloaded token applies at once. */
  adminToken: { readonly value: string };
  /** The admin API's wrong-token limit: a wrong token at the login form counts as one at the API. */
  authGuard: AuthFailureGuard;
  /** The node's metrics registry (with workers, every worker's added up), for the Overview. */
  registry: Pick<Registry, 'getMetricsAsJSON'>;
  /** Read at each summary: a reload may change the hot tier's capacity. */
  capacities: () => TierCapacities;
  /** The cluster node name; undefined for a node that runs alone. */
  nodeName: string | undefined;
  /** Every member's traffic and tiers (ClusterNode.memberMetrics); undefined for a node that runs alone. */
  clusterMetrics: (() => Promise<MemberMetrics[]>) | undefined;
}

/** `GET /dashboard/api/cluster`: the members as this node reads them now; none when it runs alone. */
export interface ClusterViewAnswer {
  clustered: boolean;
  members: MemberMetrics[];
}

export class UnsupportedFormTypeError extends ApiError {
  constructor(received: string | undefined) {
    super(415, 'unsupported_media_type', `the form must be sent as application/x-www-form-urlencoded, got ${received === undefined ? 'none' : JSON.stringify(received)}`);
  }
}

function sendHtml(response: ServerResponse, status: number, page: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...PAGE_HEADERS, 'content-length': Buffer.byteLength(page), ...headers }).end(page);
}

function redirect(response: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  response.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': 0, ...headers }).end();
}

/** Where to go after logging in: a dashboard view only, so the login form cannot redirect elsewhere. */
function nextPage(value: string | null): string {
  return value !== null && DASHBOARD_VIEWS.some((view) => value === `${DASHBOARD_ROOT}${view.path}`) ? value : DASHBOARD_ROOT;
}

function isTls(request: AdminRequest): boolean {
  return (request.raw.socket as TLSSocket).encrypted === true;
}

async function readForm(request: AdminRequest): Promise<URLSearchParams> {
  const contentType = request.raw.headers['content-type'];
  if (contentType?.split(';', 1)[0]?.trim().toLowerCase() !== 'application/x-www-form-urlencoded') throw new UnsupportedFormTypeError(contentType);
  return new URLSearchParams((await readBody(request.raw, FORM_BODY_MAX_BYTES)).toString('utf8'));
}

export function mountDashboardRoutes(router: AdminRouter, deps: DashboardRouteDeps): void {
  const { sessions } = deps;
  const assets = new DashboardAssets();
  const tokenCheck = createTokenCheck(deps.adminToken, deps.authGuard);
  const apiCheck = acceptingSession(tokenCheck, sessions);
  const version = buildInfo().version;

  /** The request's session, or why it has none. */
  const pageSession = (headers: IncomingHttpHeaders): Session | 'none' | 'expired' => {
    const cookie = sessionCookieValue(headers);
    if (cookie === undefined) return 'none';
    try {
      return sessions.verify(cookie);
    } catch (error) {
      if (error instanceof SessionExpiredError) return 'expired';
      if (error instanceof ApiError) return 'none';
      throw error;
    }
  };

  const loginRedirect = (response: ServerResponse, next: string, notice?: LoginNotice): void => {
    const query = new URLSearchParams(next === DASHBOARD_ROOT ? {} : { next });
    if (notice !== undefined) query.set('notice', notice);
    const search = query.toString();
    redirect(response, search === '' ? LOGIN_PATH : `${LOGIN_PATH}?${search}`);
  };

  router.on('GET', '/dashboard', (_request, response) => {
    response.writeHead(308, { location: DASHBOARD_ROOT, 'content-length': 0 }).end();
  });

  const pages: AdminHandler = (request, response) => {
    const rest = request.path.slice(DASHBOARD_ROOT.length);
    if (request.path.startsWith(ASSETS_PATH)) {
      if (assets.serve(request.path.slice(ASSETS_PATH.length), request.raw.headers, response)) return;
    }
    const view = DASHBOARD_VIEWS.find((item) => item.path === rest);
    if (view === undefined) throw new ApiError(404, 'not_found', `no dashboard page at ${request.path}`);
    const session = pageSession(request.raw.headers);
    if (session === 'none' || session === 'expired') {
      loginRedirect(response, request.path, session === 'expired' ? 'expired' : undefined);
      return;
    }
    sendHtml(response, 200, viewPage(view, { csrfToken: sessions.csrfToken(session), nodeName: deps.nodeName, version }));
  };
  // The Overview on its own too, so `GET /dashboard/` is listed among the routes like any endpoint.
  router.on('GET', DASHBOARD_ROOT, pages);
  router.on('GET', `${DASHBOARD_ROOT}*`, pages);

  router.on('GET', LOGIN_PATH, (request, response) => {
    const next = nextPage(request.query.get('next'));
    if (typeof pageSession(request.raw.headers) === 'object') {
      redirect(response, next);
      return;
    }
    const notice = request.query.get('notice');
    sendHtml(response, 200, loginPage({ next, notice: notice === 'expired' || notice === 'logged_out' ? notice : undefined }));
  });

  router.on('POST', LOGIN_PATH, async (request, response) => {
    const form = await readForm(request);
    const next = nextPage(form.get('next'));
    try {
      checkSameOrigin(request.raw.headers);
      // The API's own check: the same constant-time comparison and wrong-token limit as a bearer token.
      tokenCheck(request.raw, form.get('token') ?? '');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const notice: LoginNotice = error.status === 401 ? 'wrong_token' : 'refused';
      // Over the wrong-token limit (429), the page says when to try again and so does Retry-After.
      const retryAfter = error.headers['Retry-After'];
      const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': retryAfter };
      sendHtml(response, error.status, loginPage({ next, notice, detail: notice === 'refused' ? error.message : undefined }), headers);
      return;
    }
    const { cookieValue } = sessions.create();
    redirect(response, next, { 'set-cookie': sessionCookieHeader(cookieValue, Math.floor(sessions.lifetimeMs / 1000), isTls(request)) });
  });

  router.on('POST', LOGOUT_PATH, async (request, response) => {
    const form = await readForm(request);
    const cleared = { 'set-cookie': clearedSessionCookieHeader(isTls(request)) };
    const session = pageSession(request.raw.headers);
    if (typeof session === 'object') {
      try {
        checkSameOrigin(request.raw.headers);
        sessions.checkCsrf(session, form.get('csrf') ?? undefined);
      } catch (error) {
        if (!(error instanceof CsrfRejectedError)) throw error;
        sendHtml(response, error.status, refusedPage(`Not logged out: ${error.message}.`));
        return;
      }
      sessions.revoke(session);
    }
    redirect(response, `${LOGIN_PATH}?notice=logged_out`, cleared);
  });

  router.on(
    'GET',
    SUMMARY_PATH,
    requireToken(apiCheck, async (_request, response) => sendJson(response, 200, await summarizeMetrics(deps.registry, deps.capacities()))),
  );

  router.on(
    'GET',
    CLUSTER_PATH,
    requireToken(apiCheck, async (_request, response) => {
      const answer: ClusterViewAnswer = { clustered: deps.clusterMetrics !== undefined, members: (await deps.clusterMetrics?.()) ?? [] };
      sendJson(response, 200, answer);
    }),
  );

  router.on(
    'POST',
    VALIDATE_PATH,
    requireToken(apiCheck, async (request, response) => {
      const form = await readJsonBody(request.raw, formValidationRequestSchema);
      sendJson(response, 200, validateForm(form));
    }),
  );
}
