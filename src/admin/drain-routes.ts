// `GET /drain` (spec §4.1: no token, and GET, so that a plain `curl` from a pre-stop hook, a load
// balancer or an orchestrator drains a node) and the way back, `POST /v1/undrain` (token). Without a
// token, only the request's own fields can tell a page in the operator's browser from a tool: /drain
// refuses what a web page sends (web-page-request.ts), answered 403 and logged and counted as the
// listener's other refusals (`svc_http_requests_rejected_total{listener="admin",reason}`).
import { randomUUID } from 'node:crypto';
import type { UndrainResponse } from '../api/responses.js';
import type { RejectionLog } from '../edge/rejections.js';
import { ApiError } from '../api/api-error.js';
import { requireToken, type TokenCheck } from './auth.js';
import { sendJson } from './json-response.js';
import type { AdminRouter } from './router.js';
import { madeByWebPage } from './web-page-request.js';

/** The refusal's code in the answer, and its reason in the log line and the counter. */
const CROSS_SITE_REQUEST = 'cross_site_request';

export class CrossSiteDrainError extends ApiError {
  constructor(why: string, requestId: string) {
    super(403, CROSS_SITE_REQUEST, `/drain refuses requests a web page makes (${why}); call it from curl, a load balancer or an orchestrator (request id ${requestId})`);
  }
}

export interface DrainRouteDeps {
  /** Takes the node out of service; resolves once in-flight requests finished (or the drain timed out). */
  drain: () => Promise<void>;
  /** The admin listener's rejection log. */
  rejections: RejectionLog;
}

export function mountDrainRoute(router: AdminRouter, deps: DrainRouteDeps): void {
  router.on('GET', '/drain', async (request, response) => {
    const why = madeByWebPage(request.raw.headers);
    if (why !== undefined) {
      const requestId = randomUUID();
      const { socket } = request.raw;
      const remote = `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`;
      deps.rejections.record({ status: 403, reason: CROSS_SITE_REQUEST, requestId, remote, method: request.method, path: request.path });
      throw new CrossSiteDrainError(why, requestId);
    }
    await deps.drain();
    sendJson(response, 200, { status: 'drained' });
  });
}

/** `POST /v1/undrain`: idempotent; on a node that serves it changes nothing and answers the same. */
export function mountUndrainRoute(router: AdminRouter, check: TokenCheck, undrain: () => Promise<void>): void {
  router.on(
    'POST',
    '/v1/undrain',
    requireToken(check, async (_request, response) => {
      await undrain();
      sendJson(response, 200, { status: 'serving' } satisfies UndrainResponse);
    }),
  );
}
