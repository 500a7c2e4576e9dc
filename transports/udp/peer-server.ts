// The server side of the reliable path: a Node request listener for `/v1/peer/*`. The transport
// runs it on its own HTTP(S) listener, or svc's admin server mounts it. Request bodies are bounded
// (413 beyond). Every refusal answers the admin API's error shape, `{"error":{"code","message"}}`
// (spec §4.1 lists these paths with the admin API). A request the cluster secret's seal does not
// authenticate answers 401, and a body its handler cannot read (MalformedRequestError) 400 with what is
// wrong with it; any other failure of a handler answers 500 with a fixed message, so nothing of the
// handler's error (which may name internal state) leaves the node.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Address, RequestHandler } from '../../cluster/transport.js';
import { MalformedRequestError, UnauthenticatedRequestError } from '../../cluster/index.js';
import { announcedLength, BodyTooLargeError, readBody } from '../shared/read-body.js';
import { formatAddress, parseAddress } from './address.js';
import { channelOfPath, FROM_HEADER } from './peer-paths.js';

export type PeerRequestListener = (request: IncomingMessage, response: ServerResponse) => void;

export interface PeerServerOptions {
  /** With cluster TLS: only sockets whose client certificate chains to the cluster CA are served. */
  readonly requireAuthorizedTls: boolean;
  readonly maxRequestBodyBytes: number;
  readonly handlers: ReadonlyMap<string, RequestHandler>;
}

/** Whether `socket` is a TLS connection whose peer presented a certificate the CA verified. */
export function isAuthorizedTlsPeer(socket: Socket): boolean {
  return socket instanceof TLSSocket && socket.authorized;
}

/**
 * RFC 9110 §15.5.2: a 401 names the scheme that would be accepted. The credential is the seal of the
 * body under the cluster secret, which no registered scheme describes; the name says what is missing.
 */
const SEALED_CHALLENGE = 'Sealed realm="cluster"';

function reply(response: ServerResponse, status: number, code: string, message: string, close = false): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = Buffer.from(JSON.stringify({ error: { code, message } }), 'utf8');
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.byteLength,
    ...(status === 405 ? { allow: 'POST' } : {}),
    ...(status === 401 ? { 'www-authenticate': SEALED_CHALLENGE } : {}),
    // An unread oversized or unauthorized body is not worth draining: close the connection instead.
    ...(close ? { connection: 'close' } : {}),
  });
  response.end(body);
}

function callerAddress(request: IncomingMessage): Address {
  const header = request.headers[FROM_HEADER];
  if (typeof header === 'string') {
    try {
      parseAddress(header);
      return header;
    } catch {
      // A malformed header falls back to the socket's own address below.
    }
  }
  return formatAddress(request.socket.remoteAddress ?? 'unknown', request.socket.remotePort ?? 0);
}

export class PeerServer {
  readonly listener: PeerRequestListener = (request, response) => {
    this.serve(request, response).catch(() => response.destroy());
  };
  private readonly serving = new Set<AbortController>();
  private stopped = false;

  constructor(private readonly options: PeerServerOptions) {}

  /** Aborts every handler still running and answers 503 from now on. */
  stop(): void {
    this.stopped = true;
    for (const controller of this.serving) controller.abort();
    this.serving.clear();
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (this.stopped) return reply(response, 503, 'transport_stopped', 'the cluster transport is stopped');
    if (this.options.requireAuthorizedTls && !isAuthorizedTlsPeer(request.socket)) {
      return reply(response, 403, 'client_certificate_required', 'a client certificate from the cluster CA is required', true);
    }
    const channel = channelOfPath(request.url ?? '');
    if (channel === null) return reply(response, 404, 'not_found', 'not a peer path');
    if (request.method !== 'POST') return reply(response, 405, 'method_not_allowed', 'peer requests are POST');
    const handler = this.options.handlers.get(channel);
    if (handler === undefined) return reply(response, 404, 'not_found', `no handler for channel ${channel}`);
    const length = announcedLength(request.headers['content-length']);
    const maxBytes = this.options.maxRequestBodyBytes;
    if (length !== null && length > maxBytes) return reply(response, 413, 'payload_too_large', `request body exceeds ${maxBytes} bytes`, true);

    const controller = new AbortController();
    this.serving.add(controller);
    // The caller went away (timeout, abort, its transport stopped): the handler may stop working.
    response.on('close', () => {
      this.serving.delete(controller);
      if (!response.writableFinished) controller.abort();
    });
    let body: Buffer;
    try {
      body = await readBody(request, length, maxBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return reply(response, 413, 'payload_too_large', `request body exceeds ${maxBytes} bytes`, true);
      throw error;
    }
    let answer: Uint8Array;
    try {
      answer = await handler(callerAddress(request), body, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) return void response.destroy();
      // Refused and counted by the sealed transport; the caller is told why, not that we failed.
      if (error instanceof UnauthenticatedRequestError) return reply(response, 401, 'cluster_auth_rejected', error.message);
      // The message says what the caller sent wrong, never what the node holds.
      if (error instanceof MalformedRequestError) return reply(response, 400, 'malformed_request', error.message);
      return reply(response, 500, 'internal', `the handler for ${channel} failed`);
    }
    if (this.stopped || controller.signal.aborted) return void response.destroy();
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answer.byteLength });
    response.end(answer);
  }
}
