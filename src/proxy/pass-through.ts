// Requests svc does not answer from its cache (unsafe methods, `BYPASS` routes, preconditions only the
// origin may evaluate): forwarded to the origin with their body, and the answer streamed back through
// a fill of its own that is never stored or shared, so the client reads at its own pace within the
// same bounds (read-ahead, write-idle timeout) as every other answer.
import { announcesBody, type IncomingRequest } from '../http/server-messages.js';
import type { UpstreamPool, UpstreamResponse } from '../upstream/upstream-pool.js';
import type { FillLayer } from '../fill/fill-layer.js';
import { passedAnswer } from '../fill/fill.js';
import { originRequestHeaders, responseFieldsFromOrigin, withVia } from '../fill/forward-headers.js';
import type { Exchange } from './exchange.js';
import { relayInformational } from './informational.js';
import { guardBody, type GuardedBody } from './request-body.js';
import { rejectRequest, sendUpstreamFailure } from './respond.js';

/** The origin's answer, seen before any of it reaches the client. */
export type OnOriginAnswer = (status: number, headers: Record<string, string | string[] | undefined>) => void;

/**
 * Forwards the request as it came (body included) and relays the answer, as a BYPASS. `onAnswer` runs
 * before the client is sent a byte: what it changes (an unsafe method's invalidation) is in place
 * before the client, or any other, can ask again, whichever thread takes the next request.
 */
export async function passThrough(fills: FillLayer, pool: UpstreamPool, exchange: Exchange, request: IncomingRequest, onAnswer?: OnOriginAnswer): Promise<void> {
  exchange.served('BYPASS', 'origin');
  const hasBody = announcesBody(request);
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
      return;
    }
    sendUpstreamFailure(exchange, error, { close: hasBody });
    return;
  }
  onAnswer?.(answer.statusCode, answer.headers);
  const fields = withVia(responseFieldsFromOrigin(answer.headers));
  fields.push('x-cache', 'BYPASS');
  exchange.response.writeHead(answer.statusCode, fields);
  if (request.method === 'HEAD' || answer.statusCode === 204 || answer.statusCode === 304) {
    answer.body.resume();
    exchange.response.end();
  } else {
    relay(fills, answer, exchange);
  }
}

/** Streams an answer's body to the one client it is for, through an unshared fill that never stores. */
function relay(fills: FillLayer, answer: UpstreamResponse, exchange: Exchange): void {
  const fill = fills.open('', () => Promise.resolve(passedAnswer(answer.statusCode, [], answer.body)), false);
  fill.claim().stream(exchange);
}
