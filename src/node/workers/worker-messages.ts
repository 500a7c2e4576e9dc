// What the primary and its data-plane workers say to each other over the IPC channel node:cluster
// opens. Every message carries `svc` so that the primary and the workers can tell them from other
// messages on the same channel (prom-client's, Node's own internal ones are filtered by Node).

/** Primary → worker: run the handler of `kind` with `payload` and answer with the same id. */
export interface CallMessage {
  readonly svc: 'call';
  readonly id: number;
  readonly kind: string;
  readonly payload: unknown;
}

/** Worker → primary: the answer to call `id`; `error` is a sentence when the handler failed. */
export interface ReplyMessage {
  readonly svc: 'reply';
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

/** Worker → primary: the worker serves (its listener is open); sent once per worker. */
export interface ReadyMessage {
  readonly svc: 'ready';
}

/** Worker → primary: the worker could not start, and says why (`message`, one sentence); it exits. */
export interface FailedMessage {
  readonly svc: 'failed';
  readonly message: string;
}

/** Primary → worker: stop taking work, close, and exit. */
export interface StopMessage {
  readonly svc: 'stop';
}

export type WorkerMessage = CallMessage | ReplyMessage | ReadyMessage | FailedMessage | StopMessage;

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  if (typeof message !== 'object' || message === null) return false;
  const svc = (message as { svc?: unknown }).svc;
  return svc === 'call' || svc === 'reply' || svc === 'ready' || svc === 'failed' || svc === 'stop';
}
