// The unauthenticated operational endpoints of spec §4.1: liveness, readiness (with detail), version
// and metrics. `/drain` has a file of its own (drain-routes.ts): it changes the node's state.
import { buildInfo } from '../version/build-info.js';
import type { NodeMetrics } from '../observe/metrics.js';
import { wantsOpenMetrics } from '../observe/openmetrics-text.js';
import type { Readiness } from '../observe/readiness.js';
import type { AdminRouter } from './router.js';
import { sendJson } from './json-response.js';

export interface HealthRouteDeps {
  readiness: Readiness;
  /** What `/metrics` serves: the node's registry, or with workers every worker's added up. */
  metrics: Pick<NodeMetrics, 'exposition'>;
}

export function mountHealthRoutes(router: AdminRouter, deps: HealthRouteDeps): void {
  router.on('GET', '/healthz', (_request, response) => sendJson(response, 200, { status: 'ok' }));

  router.on('GET', '/readyz', (request, response) => {
    const status = deps.readiness.status();
    const body: { status: string; conditions?: unknown } = { status };
    if (request.query.get('detail') === '1') body.conditions = deps.readiness.detail();
    sendJson(response, status === 'ready' ? 200 : 503, body);
  });

  router.on('GET', '/version', (_request, response) => sendJson(response, 200, buildInfo()));

  router.on('GET', '/metrics', async (request, response) => {
    const { contentType, body } = await deps.metrics.exposition(wantsOpenMetrics(request.raw.headers.accept));
    response.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
}
