// An HTTP listener facing the network (the data plane and the admin API): Node's server with the
// limits of the configuration, a door that reads every request head before Node's parser does
// (door.ts: exact header size and field count, request line, transfer coding), and an answer with the
// right status for everything refused before a handler runs: 431 for an oversized header section, 505
// for an HTTP version other than 1.0 and 1.1, 501 for a transfer coding other than chunked, 408 for
// headers that do not arrive in time, 400 (counted as smuggling) for ambiguous framing, 405 for
// CONNECT, 417 for an expectation svc cannot meet. Each is logged once with its reason (rejections.ts).
// With TLS (src/tls/) the same server runs over each connection's decrypted stream; a client listener
// given an HTTP/2 handler also offers `h2` by ALPN and serves those connections with it
// (alpn-server.ts, http2-sessions.ts), HTTP/1.1 staying on this path.
import { randomUUID } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Counter } from 'prom-client';
import { classifyClientError } from './client-errors.js';
import { openDoor } from './door.js';
import { pathForLog, type RejectionLog } from './rejections.js';
import { ALPN_PROTOCOLS, HTTP1_ALPN_PROTOCOLS, type TlsTermination } from '../tls/tls-termination.js';
import { handshakeCompleted } from '../tls/tls-fields.js';
import type { IncomingRequest, RequestHandler } from '../http/server-messages.js';
import { AlpnServer } from './alpn-server.js';
import { Http2Sessions } from './http2-sessions.js';
import { remoteOf } from './client-connection.js';
import type { ErrorBody, ListenerLimits } from './listener-options.js';


export interface EdgeServerOptions {
  readonly limits: ListenerLimits;
  /**
   * False only for a data-plane thread's internal listener: its requests come from the node's own
   * threads, which let them through their door and add fields of their own, so it has no door.
   */
  readonly fromClients: boolean;
  readonly rejections: RejectionLog;
  readonly smugglingRejected: Counter;
  readonly errorBody: ErrorBody;
  readonly handler: RequestListener;
  /**
   * True when the handler itself sends `100 Continue` once it has accepted a request that expects it
   * (RFC 9110 §10.1.1), so a request refused on its head alone never has its body sent.
   */
  readonly handlerSendsContinue: boolean;
  /** Present: the listener terminates TLS with these certificates (a client's listener only). */
  readonly tls?: TlsTermination | undefined;
  /**
   * Present with `tls`: the listener offers `h2` by ALPN and serves HTTP/2 streams with this handler
   * (the same as `handler`, typed for both protocols).
   */
  readonly http2Handler?: RequestHandler | undefined;
}

/** How often Node checks connections for the header timeout: its precision. */
const MAX_CHECK_INTERVAL_MS = 1_000;

/** True when the request asks for `100 Continue` the way Node recognises it. */
export function expectsContinue(request: IncomingRequest): boolean {
  const expect = request.headers.expect;
  return expect !== undefined && /(?:^|\W)100-continue(?:$|\W)/i.test(expect);
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

/** A refusal made before a handler runs: its status, its reason word, and whether it is smuggling. */
interface Refusal {
  readonly status: number;
  readonly reason: string;
  readonly smuggling: boolean;
}

/** The HTTPS server of a TLS listener: HTTP/1.1 only, or HTTP/2 as well when it has a handler for it. */
function createTlsServer(options: EdgeServerOptions, tls: TlsTermination, httpOptions: object, onRequest: RequestListener): Server {
  const { http2Handler } = options;
  if (http2Handler === undefined) return createHttpsServer({ ...httpOptions, ...tls.serverOptions(HTTP1_ALPN_PROTOCOLS) }, onRequest);
  const http2 = new Http2Sessions({ limits: options.limits, rejections: options.rejections, errorBody: options.errorBody, handler: http2Handler });
  return new AlpnServer({ ...httpOptions, ...tls.serverOptions(ALPN_PROTOCOLS) }, onRequest, http2);
}

export function createEdgeServer(options: EdgeServerOptions): Server {
  const { limits, rejections, errorBody, handler } = options;
  /**
   * The request still being answered on each connection, for a parse error or timeout that arrives
   * meanwhile. Only answers that outlive their handler's call are noted (every hit ends before).
   */
  const answering = new WeakMap<object, { request: IncomingMessage; response: ServerResponse }>();
  /** Connections whose refusal was answered: whatever the client sends after it is not read. */
  const answered = new WeakSet<object>();

  /** Answers a refusal on a connection no handler answers, and closes it; `head` names the refused request. */
  const refuse = (socket: Duplex & { remoteAddress?: string; remotePort?: number }, refusal: Refusal, head?: { method?: string; target?: string }): void => {
    answered.add(socket);
    if (refusal.smuggling) options.smugglingRejected.inc();
    const requestId = randomUUID();
    const pending = answering.get(socket);
    rejections.record({
      status: refusal.status,
      reason: refusal.reason,
      requestId,
      remote: remoteOf(socket),
      method: head === undefined ? pending?.request.method : head.method,
      path: pathForLog(head === undefined ? pending?.request.url : head.target),
    });
    const answer = errorBody(refusal.status, refusal.reason, requestId);
    const answerRaw = (): void => {
      if (socket.writable) socket.end(rawAnswer(refusal.status, answer));
      else socket.destroy();
    };
    if (pending === undefined) {
      answerRaw();
    } else if (!pending.request.complete) {
      // The request being answered is the one whose body broke or stalled.
      answerAndClose(pending.response, refusal.status, answer, pending.request.method === 'HEAD');
      pending.response.once('finish', () => socket.destroy());
    } else {
      // A pipelined request refused behind one still being answered: its answer follows that one's.
      pending.response.once('close', () => (pending.response.writableFinished ? answerRaw() : socket.destroy()));
    }
  };

  const httpOptions = {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headerTimeoutMs,
    // Bodies have an idle timeout of their own where they are read; a total would cut slow but
    // steady uploads and is left off (0).
    requestTimeout: 0,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(MAX_CHECK_INTERVAL_MS, limits.headerTimeoutMs),
    // Host is checked by the handlers, so a missing one is logged and answered like every refusal.
    requireHostHeader: false,
  };
  const tls = options.tls;
  const onRequest: RequestListener = (request, response) => track(request, response);
  const server: Server = tls === undefined ? createServer(httpOptions, onRequest) : createTlsServer(options, tls, httpOptions, onRequest);
  if (tls !== undefined) tls.attach(server as ReturnType<typeof createHttpsServer>);
  // Node keeps the first 2,000 fields by default and drops the rest unsaid. A client's head holds no
  // more than the door lets through; the internal listener's come from the node's own threads.
  server.maxHeadersCount = options.fromClients ? limits.maxHeaderFields : 0;
  const door = options.fromClients
    ? openDoor(server, { maxHeaderBytes: limits.maxHeaderBytes, maxHeaderFields: limits.maxHeaderFields }, (socket, refusal) =>
        refuse(socket, { ...refusal, smuggling: false }, refusal),
      )
    : undefined;

  /** Whether a request the parser reports is to be answered: the door let its head through. */
  const admitted = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (door === undefined || door.admits(request)) return true;
    // A head the door refused is answered by the door, as is whatever the parser reports after it.
    if (door.refused(request.socket)) return false;
    answered.add(request.socket);
    options.smugglingRejected.inc();
    const requestId = randomUUID();
    rejections.record({ status: 400, reason: 'smuggling', requestId, remote: remoteOf(request.socket), method: request.method, path: pathForLog(request.url) });
    answerAndClose(response, 400, errorBody(400, 'smuggling', requestId), request.method === 'HEAD');
    return false;
  };

  const track: RequestListener = (request, response) => {
    if (!admitted(request, response)) return;
    handler(request, response);
    if (response.writableEnded) return;
    const socket = request.socket;
    answering.set(socket, { request, response });
    response.once('close', () => {
      if (answering.get(socket)?.response === response) answering.delete(socket);
    });
  };

  server.on('clientError', (error: Error & { code?: string; bytesParsed?: number }, socket: Duplex & { remoteAddress?: string; remotePort?: number }) => {
    // A TLS handshake that failed or timed out (https.Server reports it here): no HTTP answer can reach
    // that client, and one written would wait forever for a handshake that is not coming.
    if (tls !== undefined && !handshakeCompleted(socket)) {
      socket.destroy();
      return;
    }
    // Answered already: what else the client sent is not read.
    if (answered.has(socket)) {
      socket.destroy();
      return;
    }
    if (door?.answersParseError(socket, error.bytesParsed)) return;
    const verdict = classifyClientError(error.code);
    if (verdict === undefined) socket.destroy();
    else refuse(socket, verdict);
  });

  // svc is no forward proxy: CONNECT (authority-form) is refused, not left hanging.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    if (door?.refused(socket)) return;
    const requestId = randomUUID();
    rejections.record({ status: 405, reason: 'connect', requestId, remote: remoteOf(request.socket), method: 'CONNECT' });
    socket.end(rawAnswer(405, errorBody(405, 'connect', requestId)));
  });

  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    if (!admitted(request, response)) return;
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
