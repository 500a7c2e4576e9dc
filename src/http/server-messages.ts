// A client's request and the response to it, as svc's listeners get them: Node's HTTP/1.x server
// objects, or its HTTP/2 compatibility objects (Http2ServerRequest/Response, RFC 9113), which mirror
// them closely but not wholly. The few places they differ are here, named for what the data plane
// means by them, so that every other file treats a request the same whatever protocol carried it.
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { constants, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';

/** A request that came in, over HTTP/1.x or HTTP/2. */
export type IncomingRequest = IncomingMessage | Http2ServerRequest;

/**
 * The response to an IncomingRequest: what the data plane does with one, which Node's HTTP/1.x
 * ServerResponse and HTTP/2 Http2ServerResponse both do alike. What only one of them does is reached
 * through the functions below.
 */
export interface OutgoingResponse {
  readonly statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  /** `fields`: an object, or a flat list `name, value, name, value…` (repeated names kept). */
  writeHead(statusCode: number, fields?: OutgoingHttpHeaders | string[]): unknown;
  write(chunk: Uint8Array): boolean;
  end(chunk?: Uint8Array | string): unknown;
  writeContinue(): unknown;
  writeEarlyHints(hints: Record<string, string | string[]>): void;
  on(event: 'close' | 'drain', listener: () => void): unknown;
  once(event: 'close' | 'finish', listener: () => void): unknown;
  off(event: 'close' | 'drain', listener: () => void): unknown;
}

/** What a listener does with a request and its response. */
export type RequestHandler = (request: IncomingRequest, response: OutgoingResponse) => void;

/** The authority a request names, for a log line: `:authority` over HTTP/2 (else Host), Host over HTTP/1.x. */
export function hostOf(request: IncomingRequest): string | undefined {
  const authority = request.headers[':authority'];
  return typeof authority === 'string' ? authority : request.headers.host;
}

/** The protocol as the access log names it: `HTTP/1.1`, `HTTP/1.0`, `HTTP/2.0`. */
export function protocolOf(request: IncomingRequest): string {
  return `HTTP/${request.httpVersion}`;
}

/** Whether a request came over HTTP/2. */
export function isHttp2(request: IncomingRequest): request is Http2ServerRequest {
  return request.httpVersionMajor === 2;
}

/** Whether a response is over HTTP/1.x: then it owns its connection while it is written. */
export function isHttp1(response: OutgoingResponse): response is ServerResponse {
  return response instanceof ServerResponse;
}

/** The HTTP/2 response this is when it is not an HTTP/1.x one. */
function asHttp2(response: OutgoingResponse): Http2ServerResponse {
  return response as unknown as Http2ServerResponse;
}

/**
 * Whether the response can no longer be written: cut by svc, or its client went away. An HTTP/2
 * response has no `destroyed` of its own; its stream has.
 */
export function responseGone(response: OutgoingResponse): boolean {
  return isHttp1(response) ? response.destroyed : asHttp2(response).stream.destroyed;
}

/**
 * Cuts a response svc cannot finish (its origin failed mid-body, its client stopped reading): the
 * client must see it fail, never take what it got for the whole. HTTP/1.1 closes the connection.
 * HTTP/2 resets the stream with INTERNAL_ERROR (RFC 9113 §8.1): Node's own destroy() would reset it
 * with NO_ERROR, which a client may read as a complete response.
 */
export function cutResponse(response: OutgoingResponse): void {
  if (isHttp1(response)) {
    response.destroy();
    return;
  }
  const { stream } = asHttp2(response);
  cutStreams.add(stream);
  stream.close(constants.NGHTTP2_INTERNAL_ERROR);
}

const cutStreams = new WeakSet<object>();

/** Whether svc itself reset this HTTP/2 stream (cutResponse), rather than its client. */
export function cutBySvc(stream: object): boolean {
  return cutStreams.has(stream);
}

/**
 * The connection is not to carry another request after this answer: part of the request (its body)
 * was not read, so its next bytes are not a request. HTTP/1.1 says `Connection: close`. An HTTP/2
 * stream is framed on its own, so ending it ends its body too and the session goes on: nothing to do.
 */
export function closeAfterUnreadBody(response: OutgoingResponse): void {
  if (isHttp1(response)) response.shouldKeepAlive = false;
}

/**
 * The node is draining: the client is to take its next request elsewhere. HTTP/1.1 says
 * `Connection: close` on this answer; HTTP/2 sends GOAWAY now (RFC 9113 §6.8), letting the streams
 * already open finish, this one included.
 */
export function closeConnectionAfter(response: OutgoingResponse): void {
  if (isHttp1(response)) response.shouldKeepAlive = false;
  else asHttp2(response).stream.session?.close();
}

/** Whether the request said, at its head, that a body follows. */
export function announcesBody(request: IncomingRequest): boolean {
  // HTTP/2 frames a body in DATA frames and may send it without Content-Length (RFC 9113 §8.1): its
  // HEADERS frame without END_STREAM is what announces it.
  if (isHttp2(request)) return !request.stream.endAfterHeaders;
  return request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
}
