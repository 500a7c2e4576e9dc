// Answers svc makes itself on the data plane (no route, origin down, request refused…): plain text
// with the status and a request id, never cached downstream. What went wrong (an origin's address, a
// library's message) goes to the log line under that request id, never to the client.
import { STATUS_CODES } from 'node:http';
import type { ErrorBody } from '../edge/listener-options.js';
import { pathForLog } from '../edge/rejections.js';
import { connectionOf, remoteOf } from '../edge/client-connection.js';
import { closeAfterUnreadBody, cutResponse, hostOf } from '../http/server-messages.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { Exchange } from './exchange.js';

/** The body of every error answer of the data plane. */
export const dataPlaneErrorBody: ErrorBody = (status, _reason, requestId) => ({
  contentType: 'text/plain; charset=utf-8',
  body: `svc: ${status} ${STATUS_CODES[status] ?? 'Error'} (request id ${requestId})\n`,
});

export interface ProxyErrorOptions {
  /** The cause, logged with the detail (an UpstreamError names the origin; the log may, the body not). */
  cause?: unknown;
  /** Extra response fields (Retry-After on 429, Allow on 405). */
  headers?: Record<string, string>;
  /** Close the connection after the answer: part of the request (its body) was not read. */
  close?: boolean;
}

/**
 * Answers with `status` and logs `detail` once, under the request id the body shows: at warn for
 * svc's or the origin's failures (5xx), at info otherwise.
 */
export function sendProxyError(exchange: Exchange, status: number, detail: string, options: ProxyErrorOptions = {}): void {
  const { request } = exchange;
  const fields = {
    request_id: exchange.requestId,
    status,
    detail,
    method: request.method,
    host: hostOf(request),
    path: pathForLog(request.url),
    ...(options.cause === undefined ? {} : { err: options.cause }),
  };
  if (status >= 500) exchange.deps.logger.warn(fields, 'request failed');
  else exchange.deps.logger.info(fields, 'request failed');
  writeErrorAnswer(exchange, status, options);
}

/**
 * Refuses a request the client made wrong or too much of (bad Host, method not forwarded, over a
 * limit): logged once as a rejection with its reason and counted, then answered.
 */
export function rejectRequest(exchange: Exchange, status: number, reason: string, options: ProxyErrorOptions = {}): void {
  const { request } = exchange;
  exchange.deps.rejections.record({
    status,
    reason,
    requestId: exchange.requestId,
    remote: remoteOf(connectionOf(request)),
    method: request.method,
    host: hostOf(request),
    path: pathForLog(request.url),
  });
  writeErrorAnswer(exchange, status, options);
}

/**
 * Answers an origin request that failed: 502 or 504 (logged with the origin's address, which the
 * client is not shown), or 429 with Retry-After for a client over its own budget (a rejection).
 * `status` replaces the failure's own (must-revalidate turns any failure into 504).
 */
export function sendUpstreamFailure(exchange: Exchange, error: unknown, options: ProxyErrorOptions & { status?: number } = {}): void {
  const failure = error instanceof UpstreamError ? error : new UpstreamError('upstream_error', 'origin request failed', { cause: error });
  if (failure.code === 'client_busy') {
    rejectRequest(exchange, 429, 'client_busy', { ...options, headers: { 'retry-after': '1' } });
    return;
  }
  sendProxyError(exchange, options.status ?? failure.status, failure.message, { ...options, cause: failure.cause ?? failure });
}

function writeErrorAnswer(exchange: Exchange, status: number, options: ProxyErrorOptions): void {
  const { response } = exchange;
  if (response.headersSent) {
    cutResponse(response);
    return;
  }
  const { body } = dataPlaneErrorBody(status, '', exchange.requestId);
  if (options.close) closeAfterUnreadBody(response);
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-cache': exchange.cacheResult,
    ...options.headers,
  });
  exchange.bytesOut += Buffer.byteLength(body);
  response.end(exchange.request.method === 'HEAD' ? undefined : body);
}
