// The admin listener (default 127.0.0.1:9000): reads each request's target and Host with the data
// plane's rules (src/edge/), routes it through the AdminRouter and answers every failure in the API's
// JSON error shape. Limits and parse errors are handled as on the data plane (edge-server.ts).
import { STATUS_CODES, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Counter } from 'prom-client';
import type { Logger } from '../observe/logger.js';
import { isEdgeRejection, readEdgeRequest } from '../edge/client-request.js';
import { answerAndClose, createEdgeServer } from '../edge/edge-server.js';
import type { ErrorBody, ListenerLimits } from '../edge/listener-options.js';
import { pathForLog, type RejectionLog } from '../edge/rejections.js';
import { TrustedProxies } from '../edge/trusted-proxies.js';
import type { TlsTermination } from '../tls/tls-termination.js';
import type { AdminRouter } from './router.js';
import { sendError, toApiError } from './json-response.js';

export interface AdminServerOptions {
  logger: Logger;
  limits: ListenerLimits;
  /** Longest silence while a request body is read; 408 after it. */
  bodyIdleTimeoutMs: number;
  rejections: RejectionLog;
  smugglingRejected: Counter;
  /** `admin.tls`: the listener terminates TLS (and the dashboard's cookie is `Secure`). */
  tls?: TlsTermination | undefined;
}

/** Every error the listener makes itself, in the API's shape, naming the request id of its log line. */
export const adminErrorBody: ErrorBody = (status, reason, requestId) => ({
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify({ error: { code: reason, message: `${status} ${STATUS_CODES[status] ?? 'Error'} (request id ${requestId})` } }),
});

/** The admin API believes no proxy: nobody's forwarding fields matter to it. */
const NO_TRUSTED_PROXIES = new TrustedProxies([]);

export function createAdminServer(router: AdminRouter, options: AdminServerOptions): Server {
  const { logger, rejections } = options;
  return createEdgeServer({
    limits: options.limits,
    fromClients: true,
    rejections,
    smugglingRejected: options.smugglingRejected,
    errorBody: adminErrorBody,
    handlerSendsContinue: false,
    tls: options.tls,
    handler: (raw, response) => {
      const refuse = (status: number, reason: string): void => {
        const requestId = randomUUID();
        const socket = raw.socket;
        rejections.record({ status, reason, requestId, remote: `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`, method: raw.method, path: pathForLog(raw.url) });
        answerAndClose(response, status, adminErrorBody(status, reason, requestId), raw.method === 'HEAD');
      };
      const edge = readEdgeRequest(raw, { listenerScheme: options.tls === undefined ? 'http' : 'https', trustedProxies: NO_TRUSTED_PROXIES });
      if (isEdgeRejection(edge)) {
        refuse(edge.status, edge.reason);
        return;
      }
      if (raw.headers['content-length'] !== undefined || raw.headers['transfer-encoding'] !== undefined) {
        // Only while the body is read: a handler may then take long (a CPU profile) with the socket quiet.
        raw.setTimeout(options.bodyIdleTimeoutMs, () => refuse(408, 'body_idle_timeout'));
        raw.once('end', () => raw.setTimeout(0));
      }
      const query = edge.pathAndQuery.length > edge.path.length ? edge.pathAndQuery.slice(edge.path.length + 1) : '';
      const request = { raw, method: raw.method ?? 'GET', path: edge.path, query: new URLSearchParams(query) };
      const fail = (error: unknown): void => {
        const apiError = toApiError(error);
        if (apiError.status >= 500) logger.error({ err: error, path: request.path }, 'admin request failed');
        if (!response.headersSent) sendError(response, apiError);
        else response.destroy();
      };
      try {
        const result = router.resolve(request.method, request.path)(request, response);
        if (result instanceof Promise) result.catch(fail);
      } catch (error) {
        fail(error);
      }
    },
  });
}
