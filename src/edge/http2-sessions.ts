// HTTP/2 (RFC 9113) for the connections of a TLS listener whose client chose `h2` by ALPN: Node's
// http2 server serves their streams to the listener's handler through its compatibility objects, and
// every session is bounded and watched here.
//
// Bounds (docs/security.md, "HTTP/2"): 100 concurrent streams; a header list no larger than
// `limits.max_header_bytes` and no more fields than `limits.max_header_fields` (nghttp2 resets the
// stream past either); 10 MB of session memory; a session with no stream open for
// `limits.keep_alive_timeout` is closed (GOAWAY). nghttp2 itself caps a header block at 8
// CONTINUATION frames (CVE-2024-27316 class) and closes the session past it, and svc closes a session
// whose client resets more than 100 streams in a second (rapid reset, CVE-2023-44487) with GOAWAY
// ENHANCE_YOUR_CALM: far above what a browser cancels, far below the thousands an attack needs.
//
// Counting refusals with those of HTTP/1.1 (rejections.ts): nghttp2 answers a malformed request head
// (a connection-specific field, RFC 9113 §8.2.2; TE other than `trailers`; an upper-case field name;
// a missing or repeated pseudo-header; a header list over the limits) with RST_STREAM before any
// event reaches JavaScript. Clients open streams in increasing order (RFC 9113 §5.1.1), so every
// identifier between two streams svc saw, or past the last one nghttp2 processed when the session
// ends, is such a stream, counted `h2_malformed`. RFC 9113 lets a client skip identifiers; none does,
// and one that did is counted so too, at most as many times as nghttp2 tolerates refused streams in
// one session. A stream svc saw that nghttp2 resets with PROTOCOL_ERROR (its DATA disagreed with its
// Content-Length) is `h2_malformed` as well; an error that ends the whole session (DATA past its
// Content-Length, a CONTINUATION flood, too many invalid frames) is `h2_protocol_error`.
import { randomUUID } from 'node:crypto';
import {
  constants,
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { cutBySvc, type RequestHandler } from '../http/server-messages.js';
import { connectionOf, noteSessionSocket, remoteOf } from './client-connection.js';
import { pathForLog, type RejectionLog } from './rejections.js';
import type { ErrorBody, ListenerLimits } from './listener-options.js';

/** SETTINGS_MAX_CONCURRENT_STREAMS: RFC 9113 §6.5.2 advises no less than 100; nginx and h2o send 100/128. */
export const MAX_CONCURRENT_STREAMS = 100;

/** Resets by the client in one second past which its session is closed with ENHANCE_YOUR_CALM. */
export const RAPID_RESET_LIMIT = 100;
const RAPID_RESET_WINDOW_MS = 1_000;

/** Node's default (MB): HPACK tables, queued frames and stream state of one session, refused beyond. */
export const MAX_SESSION_MEMORY_MB = 10;

/**
 * Invalid frames (a malformed request head is one) a session may send before Node closes it, and
 * streams refused at creation (a header list over the limits is one): each 100, so a client cannot
 * keep one connection open to make svc refuse (and log) streams without end.
 */
const MAX_INVALID_FRAMES = 100;
const MAX_REJECTED_STREAMS = 100;

/** The pseudo-header fields of a request (RFC 9113 §8.3.1), counted among its header list's pairs. */
const REQUEST_PSEUDO_FIELDS = 4;

export interface Http2SessionsOptions {
  readonly limits: ListenerLimits;
  readonly rejections: RejectionLog;
  readonly errorBody: ErrorBody;
  readonly handler: RequestHandler;
}

/** What svc follows of one session: the streams it saw and the client's resets. */
class SessionWatch {
  /** The identifier of the last stream svc saw; streams are odd, the first is 1. */
  lastSeenId = -1;
  /** Streams open now. */
  open = 0;
  /** When the last stream closed (Date.now()). */
  idleSince = Date.now();
  /** Streams counted `h2_malformed` from skipped identifiers so far: bounded, see refusedUnseen. */
  unseenCounted = 0;
  resetsInWindow = 0;
  windowStartMs = 0;
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly session: ServerHttp2Session,
    readonly remote: string,
  ) {}
}

export class Http2Sessions {
  readonly #options: Http2SessionsOptions;
  readonly #server: Http2Server;
  readonly #sessions = new Set<SessionWatch>();
  readonly #watchOfSocket = new WeakMap<TLSSocket, SessionWatch>();
  /** The socket being handed to the http2 server: its 'session' event fires within that call. */
  #arriving: TLSSocket | undefined;

  constructor(options: Http2SessionsOptions) {
    this.#options = options;
    const { limits, handler } = options;
    this.#server = createServer(
      {
        settings: {
          maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
          maxHeaderListSize: limits.maxHeaderBytes,
          enablePush: false,
        },
        maxHeaderListPairs: limits.maxHeaderFields + REQUEST_PSEUDO_FIELDS,
        maxSessionMemory: MAX_SESSION_MEMORY_MB,
        maxSessionInvalidFrames: MAX_INVALID_FRAMES,
        maxSessionRejectedStreams: MAX_REJECTED_STREAMS,
      },
      handler,
    );
    // The handler sends `100 Continue` once it accepts a request that expects it, as over HTTP/1.1.
    this.#server.on('checkContinue', handler);
    this.#server.on('checkExpectation', (request: Http2ServerRequest, response: Http2ServerResponse) =>
      this.#refuse(request, response, 417, 'expectation_failed'),
    );
    // svc is no forward proxy: CONNECT is refused, as over HTTP/1.1.
    this.#server.on('connect', (request: Http2ServerRequest, response: Http2ServerResponse) => this.#refuse(request, response, 405, 'connect'));
    this.#server.on('session', (session: ServerHttp2Session) => this.#watch(session));
  }

  /** Serves a TLS connection whose client chose `h2`. */
  serve(socket: TLSSocket): void {
    // Registered before the session's own: the session still tells what it processed when this runs.
    socket.once('close', () => {
      const watch = this.#watchOfSocket.get(socket);
      if (watch !== undefined) this.#countUnseen(watch);
    });
    this.#arriving = socket;
    try {
      this.#server.emit('connection', socket);
    } finally {
      this.#arriving = undefined;
    }
  }

  /** Closes the sessions with no stream open (GOAWAY); the others finish theirs first. */
  closeIdle(): void {
    for (const watch of this.#sessions) if (watch.open === 0) this.#close(watch);
  }

  /** GOAWAY to every session: streams open finish, no new one starts. */
  closeGracefully(): void {
    for (const watch of this.#sessions) this.#close(watch);
  }

  /** Cuts every session now. */
  closeAll(): void {
    for (const watch of this.#sessions) {
      this.#countUnseen(watch);
      watch.session.destroy();
    }
  }

  #watch(session: ServerHttp2Session): void {
    const socket = this.#arriving!;
    noteSessionSocket(session, socket);
    const watch = new SessionWatch(session, remoteOf(socket));
    this.#sessions.add(watch);
    this.#watchOfSocket.set(socket, watch);
    session.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => this.#opened(watch, stream, headers));
    session.on('error', (error: Error & { code?: string }) => {
      // A socket error (the client reset the connection) ends the session too; only HTTP/2's own are refusals.
      if (error.code?.startsWith('ERR_HTTP2_')) this.#record(watch, 400, 'h2_protocol_error');
    });
    session.once('close', () => {
      clearTimeout(watch.timer);
      this.#sessions.delete(watch);
    });
    this.#armIdle(watch, this.#options.limits.keepAliveTimeoutMs);
  }

  #opened(watch: SessionWatch, stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    // A stream a server session reports was opened by the client: it has its identifier.
    const id = stream.id!;
    this.#countSkipped(watch, id);
    watch.lastSeenId = id;
    watch.open++;
    stream.once('close', () => {
      watch.open--;
      watch.idleSince = Date.now();
      if (watch.session.destroyed) return;
      const code = stream.rstCode;
      if (code === constants.NGHTTP2_PROTOCOL_ERROR) this.#record(watch, 400, 'h2_malformed', headers);
      else if (code !== constants.NGHTTP2_NO_ERROR && !cutBySvc(stream)) this.#reset(watch);
    });
  }

  /** The client reset a stream (or broke it) before its answer ended: counted against rapid reset. */
  #reset(watch: SessionWatch): void {
    const now = Date.now();
    if (now - watch.windowStartMs >= RAPID_RESET_WINDOW_MS) {
      watch.windowStartMs = now;
      watch.resetsInWindow = 0;
    }
    if (++watch.resetsInWindow <= RAPID_RESET_LIMIT) return;
    this.#record(watch, 429, 'rapid_reset');
    this.#countUnseen(watch);
    // GOAWAY goes out before the session is cut: the client learns why (RFC 9113 §5.4.1).
    watch.session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    watch.session.destroy();
  }

  /** Streams nghttp2 refused between the last one svc saw and stream `nextSeenId`. */
  #countSkipped(watch: SessionWatch, nextSeenId: number): void {
    const skipped = (nextSeenId - watch.lastSeenId) / 2 - 1;
    if (skipped > 0) this.#refusedUnseen(watch, skipped);
  }

  /** Streams nghttp2 refused after the last one svc saw: read before the session is gone. */
  #countUnseen(watch: SessionWatch): void {
    const last = watch.session.destroyed ? undefined : watch.session.state.lastProcStreamID;
    if (last !== undefined && last > watch.lastSeenId) {
      this.#refusedUnseen(watch, (last - watch.lastSeenId) / 2);
      watch.lastSeenId = last;
    }
  }

  #refusedUnseen(watch: SessionWatch, streams: number): void {
    const counted = Math.min(streams, MAX_INVALID_FRAMES + MAX_REJECTED_STREAMS - watch.unseenCounted);
    watch.unseenCounted += counted;
    for (let i = 0; i < counted; i++) this.#record(watch, 400, 'h2_malformed');
  }

  /** GOAWAY, then the session closes once its open streams are done. */
  #close(watch: SessionWatch): void {
    if (watch.session.closed || watch.session.destroyed) return;
    this.#countUnseen(watch);
    watch.session.close();
  }

  /** Closes the session once it has had no stream open for the keep-alive timeout. */
  #armIdle(watch: SessionWatch, delayMs: number): void {
    watch.timer = setTimeout(() => {
      if (watch.session.destroyed) return;
      const idleMs = Date.now() - watch.idleSince;
      const timeoutMs = this.#options.limits.keepAliveTimeoutMs;
      if (watch.open === 0 && idleMs >= timeoutMs) this.#close(watch);
      else this.#armIdle(watch, watch.open === 0 ? timeoutMs - idleMs : timeoutMs);
    }, delayMs);
    watch.timer.unref();
  }

  /**
   * Logs and counts a refusal made with RST_STREAM or GOAWAY: no HTTP status reached the client, so
   * the line carries the one HTTP/1.1 would answer (400 for a malformed request, 429 for too many).
   */
  #record(watch: SessionWatch, status: 400 | 429, reason: string, headers?: IncomingHttpHeaders): void {
    const method = headers?.[':method'];
    this.#options.rejections.record({
      status,
      reason,
      requestId: randomUUID(),
      remote: watch.remote,
      method: typeof method === 'string' ? method : undefined,
      path: pathForLog(typeof headers?.[':path'] === 'string' ? headers[':path'] : undefined),
    });
  }

  /** A request refused on its head (an expectation svc cannot meet, CONNECT): answered, logged, counted. */
  #refuse(request: Http2ServerRequest, response: Http2ServerResponse, status: number, reason: string): void {
    const requestId = randomUUID();
    this.#options.rejections.record({
      status,
      reason,
      requestId,
      remote: remoteOf(connectionOf(request)),
      method: request.method,
      path: pathForLog(request.url),
    });
    const answer = this.#options.errorBody(status, reason, requestId);
    response.writeHead(status, { 'content-type': answer.contentType, 'content-length': Buffer.byteLength(answer.body), 'cache-control': 'no-store' });
    if (request.method === 'HEAD') response.end();
    else response.end(answer.body);
  }
}
