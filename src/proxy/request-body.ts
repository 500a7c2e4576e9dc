// A client's request body on its way to the origin, with an idle timeout (config
// `limits.body_idle_timeout`): a client that stops sending while svc is ready to read is answered 408
// and its connection closed, so a stalled upload does not hold an upload connection to the origin.
// Time spent while svc itself is not reading (the origin is slow to take the body, or no connection
// is free yet) never counts against the client.
import type { IncomingRequest } from '../http/server-messages.js';
import { PassThrough } from 'node:stream';

export class BodyIdleTimeoutError extends Error {
  override readonly name = 'BodyIdleTimeoutError';
}

export interface GuardedBody {
  /** What the origin request reads. */
  readonly stream: PassThrough;
  /** True once the body was cut for idleness. */
  timedOut(): boolean;
}

export function guardBody(request: IncomingRequest, idleMs: number): GuardedBody {
  const stream = new PassThrough();
  let timedOut = false;
  const timer = setTimeout(() => {
    if (request.readableEnded || stream.destroyed) return;
    // Paused by the pipe: the origin side is not taking more yet, so the client is not idle.
    if (request.isPaused()) {
      timer.refresh();
      return;
    }
    timedOut = true;
    request.unpipe(stream);
    stream.destroy(new BodyIdleTimeoutError(`no request body byte arrived for ${idleMs} ms`));
  }, idleMs);
  request.on('data', () => timer.refresh());
  request.once('end', () => clearTimeout(timer));
  request.once('close', () => {
    clearTimeout(timer);
    // The client went away mid-body: the origin request must fail, not wait for bytes that never come.
    if (!request.readableEnded && !stream.destroyed) stream.destroy(new Error('the client closed the connection mid-body'));
  });
  request.pipe(stream);
  return { stream, timedOut: () => timedOut };
}
