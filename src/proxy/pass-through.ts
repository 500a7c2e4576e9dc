// Requests svc does not answer from its cache (unsafe methods, `BYPASS` routes, preconditions only the
// origin may evaluate): forwarded to the origin with their body, and the answer streamed back through
// a fill of its own that is never stored or shared, so the client reads at its own pace within the
// same bounds (read-ahead, write-idle timeout) as every other answer.
import type { IncomingMessage } from 'node:http';
import type { UpstreamPool, UpstreamResponse } from '../upstream/upstream-pool.js';
import type { FillLayer } from '../fill/fill-layer.js';
import { passedAnswer } from '../fill/fill.js';
import { originRequestHeaders, responseFieldsFromOrigin, withVia } from './forward-headers.js';
import type { Exchange } from './exchange.js';
import { relayInformational } from './informational.js';
import { guardBody, type GuardedBody } from './request-body.js';
import { rejectRequest, sendUpstreamFailure } from './respond.js';

export interface PassThroughResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Forwards the request as it came (body included) and relays the answer; undefined when it failed.
 * `cacheResult` says why the cache was not used: BYPASS, or MISS for a clustered node whose key's
 * owner could not answer (it fetched from the origin and, not owning the key, keeps no copy).
 */
export async function passThrough(
  fills: FillLayer,
  pool: UpstreamPool,
  exchange: Exchange,
  request: IncomingMessage,
  cacheResult: 'BYPASS' | 'MISS' = 'BYPASS',
): Promise<PassThroughResult | undefined> {
  exchange.served(cacheResult, 'origin');
  const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
  let body: GuardedBody | undefined;
  let answer: UpstreamResponse;
  try {
    body = hasBody ? guardBody(request, exchange.deps.bodyIdleTimeoutMs) : undefined;
    answer = await pool.request({
      method: request.method ?? 'GET',
      path: exchange.edge.pathAndQuery,
      headers: originRequestHeaders(request.rawHeaders, exchange.forwarding),
      body: body?.stream,
      clientAddress: exchange.edge.clientAddress,
      onInformational: relayInformational(exchange),
      trace: exchange.trace,
    });
  } catch (error) {
    if (body?.timedOut()) {
      // The rest of the body will not be read: the connection cannot carry another request.
      rejectRequest(exchange, 408, 'body_idle_timeout', { close: true });
      return undefined;
    }
    sendUpstreamFailure(exchange, error, { close: hasBody });
    return undefined;
  }
  const fields = withVia(responseFieldsFromOrigin(answer.headers));
  fields.push('x-cache', cacheResult);
  exchange.response.writeHead(answer.statusCode, fields);
  if (request.method === 'HEAD' || answer.statusCode === 204 || answer.statusCode === 304) {
    answer.body.resume();
    exchange.response.end();
  } else {
    relay(fills, answer, exchange);
  }
  return { status: answer.statusCode, headers: answer.headers };
}

/** Streams an answer's body to the one client it is for, through an unshared fill that never stores. */
function relay(fills: FillLayer, answer: UpstreamResponse, exchange: Exchange): void {
  const fill = fills.open('', () => Promise.resolve(passedAnswer(answer.statusCode, [], answer.body)), false);
  fill.claim().stream(exchange);
}
