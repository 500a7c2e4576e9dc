// An HTTP listener facing the network (the data plane and the admin API): Node's server with the
// limits of the configuration, and an answer with the right status for everything Node refuses
// before a handler runs: 431 for an oversized header section, 408 for headers that do not arrive in
// time, 400 (counted as smuggling) for ambiguous framing, 405 for CONNECT, 417 for an expectation
// svc cannot meet. Each is logged once with its reason (rejections.ts).
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Counter } from 'prom-client';
import { classifyClientError } from './client-errors.js';
import { pathForLog, type RejectionLog } from './rejections.js';

export interface ListenerLimits {
  /** Largest request header section (request line and fields); 431 beyond. */
  readonly maxHeaderBytes: number;
  /** Time allowed for a request's header section to arrive; 408 after it. */
  readonly headerTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open. */
  readonly keepAliveTimeoutMs: number;
}

/** The body of an answer svc makes itself: generic, naming the status and the request id, no more. */
export type ErrorBody = (status: number, reason: string, requestId: string) => { contentType: string; body: string };

export interface EdgeServerOptions {
  readonly limits: ListenerLimits;
  readonly rejections: RejectionLog;
  readonly smugglingRejected: Counter;
  readonly errorBody: ErrorBody;
  readonly handler: RequestListener;
  /**
   * True when the handler itself sends `100 Continue` once it has accepted a request that expects it
   * (RFC 9110 §10.1.1), so a request refused on its head alone never has its body sent.
   */
  readonly handlerSendsContinue: boolean;
}

/** How often Node checks connections for the header timeout: its precision. */
const MAX_CHECK_INTERVAL_MS = 1_000;

/** True when the request asks for `100 Continue` the way Node recognises it. */
export function expectsContinue(request: IncomingMessage): boolean {
  const expect = request.headers.expect;
  return expect !== undefined && /(?:^|\W)100-continue(?:$|\W)/i.test(expect);
}

function remoteOf(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string {
  return `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`;
}

/** The raw bytes of an error answer on a connection that is then closed. */
function rawAnswer(status: number, answer: { contentType: string; body: string }): string {
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    `content-type: ${answer.contentType}\r\ncontent-length: ${Buffer.byteLength(answer.body)}\r\n` +
    `cache-control: no-store\r\nconnection: close\r\n\r\n${answer.body}`
  );
}

/** Answers an error on a response no handler will answer, and closes the connection after it. */
export function answerAndClose(response: ServerResponse, status: number, answer: { contentType: string; body: string }, head = false): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.shouldKeepAlive = false;
  response.writeHead(status, {
    'content-type': answer.contentType,
    'content-length': Buffer.byteLength(answer.body),
    'cache-control': 'no-store',
    connection: 'close',
  });
  response.end(head ? undefined : answer.body);
}

export function createEdgeServer(options: EdgeServerOptions): Server {
  const { limits, rejections, errorBody, handler } = options;
  /**
   * The request still being answered on each connection, for a parse error or timeout that arrives
   * meanwhile. Only answers that outlive their handler's call are noted (every hit ends before).
   */
  const answering = new WeakMap<object, { request: IncomingMessage; response: ServerResponse }>();
  const track: RequestListener = (request, response) => {
    handler(request, response);
    if (response.writableEnded) return;
    const socket = request.socket;
    answering.set(socket, { request, response });
    response.once('close', () => {
      if (answering.get(socket)?.response === response) answering.delete(socket);
    });
  };
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headerTimeoutMs,
      // Bodies have an idle timeout of their own where they are read; a total would cut slow but
      // steady uploads and is left off (0).
      requestTimeout: 0,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(MAX_CHECK_INTERVAL_MS, limits.headerTimeoutMs),
      // Host is checked by the handlers, so a missing one is logged and answered like every refusal.
      requireHostHeader: false,
    },
    track,
  );

  server.on('clientError', (error: Error & { code?: string }, socket: Duplex & { remoteAddress?: string; remotePort?: number }) => {
    const verdict = classifyClientError(error.code);
    if (verdict === undefined) {
      socket.destroy();
      return;
    }
    if (verdict.smuggling) options.smugglingRejected.inc();
    const requestId = randomUUID();
    const pending = answering.get(socket);
    rejections.record({
      status: verdict.status,
      reason: verdict.reason,
      requestId,
      remote: remoteOf(socket),
      method: pending?.request.method,
      path: pathForLog(pending?.request.url),
    });
    const answer = errorBody(verdict.status, verdict.reason, requestId);
    if (pending === undefined) {
      if (socket.writable) socket.end(rawAnswer(verdict.status, answer));
      else socket.destroy();
    } else if (!pending.request.complete) {
      // The request being answered is the one whose body broke or stalled.
      answerAndClose(pending.response, verdict.status, answer, pending.request.method === 'HEAD');
      pending.response.once('finish', () => socket.destroy());
    } else {
      // A pipelined request broke behind one still being answered: nothing can be said in order.
      socket.destroy();
    }
  });

  // svc is no forward proxy: CONNECT (authority-form) is refused, not left hanging.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const requestId = randomUUID();
    rejections.record({ status: 405, reason: 'connect', requestId, remote: remoteOf(request.socket), method: 'CONNECT' });
    socket.end(rawAnswer(405, errorBody(405, 'connect', requestId)));
  });

  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const requestId = randomUUID();
    rejections.record({
      status: 417,
      reason: 'expectation_failed',
      requestId,
      remote: remoteOf(request.socket),
      method: request.method,
      path: pathForLog(request.url),
    });
    answerAndClose(response, 417, errorBody(417, 'expectation_failed', requestId), request.method === 'HEAD');
  });

  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!options.handlerSendsContinue) response.writeContinue();
    track(request, response);
  });
  return server;
}
