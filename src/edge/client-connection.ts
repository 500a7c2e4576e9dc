// The client's connection a request came on, as the data plane names it in logs and reads its TLS
// from: the socket. An HTTP/1.x request holds it as `request.socket`. An HTTP/2 request's `socket` is
// a proxy over its stream that forgets the connection once the stream closes (and reads nothing once
// the session is gone), so the TLS socket under each session is kept here when the session begins.
import type { Socket } from 'node:net';
import type { Http2Session } from 'node:http2';
import { isHttp2, type IncomingRequest } from '../http/server-messages.js';

const socketOfSession = new WeakMap<Http2Session, Socket>();

/** Called when an HTTP/2 session begins on `socket`. */
export function noteSessionSocket(session: Http2Session, socket: Socket): void {
  socketOfSession.set(session, socket);
}

/** The client's socket; undefined for an HTTP/2 request whose stream already closed. */
export function connectionOf(request: IncomingRequest): Socket | undefined {
  if (!isHttp2(request)) return request.socket;
  const session = request.stream.session;
  return session === undefined ? undefined : socketOfSession.get(session);
}

/** `address:port` of a connection, as logs name a client; `:0` when it is not known. */
export function remoteOf(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined } | undefined): string {
  return `${socket?.remoteAddress ?? ''}:${socket?.remotePort ?? 0}`;
}
