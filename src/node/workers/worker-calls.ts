// The primary's side of a call to every data-plane worker: it sends one message to each live worker
// and resolves only once each of them answered, died, or was dealt with after the timeout. Used for
// what must be true in every worker before the admin API answers (a purge, a ban, a refresh has been
// applied everywhere) and for what must be gathered from every worker (metrics, stats).
//
// The rules, so that "applied in every worker" holds without an exception:
// - the call goes to every worker connected at the time, ready or still starting (a starting worker
//   holds calls until its handlers are set, see worker-answers.ts);
// - a worker that exits before answering holds no state any more: it is counted as gone, and its
//   replacement takes its state from the primary when it starts;
// - with `onFailure: 'kill'`, a worker that does not answer within the timeout, or whose handler
//   failed, is killed (SIGKILL): a worker that may have missed an invalidation must not serve again.
//   With `onFailure: 'report'` (gathering figures) it is only counted.
import type { Worker } from 'node:cluster';
import { isWorkerMessage, type CallMessage, type WorkerMessage } from './worker-messages.js';

/** Sends a message to a worker (held until it listens); `onError` hears a send that failed. */
export type SendToWorker = (worker: Worker, message: WorkerMessage, onError: (error: Error) => void) => void;

/** How long a call waits for each worker by default; a worker answers in well under a millisecond. */
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;

export interface CallOptions {
  /** How long to wait for every answer. */
  timeoutMs?: number;
  /** What happens to a worker that did not answer in time or failed: killed, or only reported. */
  onFailure: 'kill' | 'report';
}

export interface CallOutcome<R> {
  /** The answers, one per worker that answered, in no particular order. */
  answers: R[];
  /** Workers that exited before they answered. */
  gone: number;
  /** Workers that did not answer within the timeout, or whose handler failed (with its message). */
  failed: { workerId: number; reason: string }[];
}

interface Pending {
  readonly waiting: Map<number, Worker>;
  readonly outcome: CallOutcome<unknown>;
  readonly onFailure: CallOptions['onFailure'];
  readonly settle: () => void;
}

export class WorkerCalls {
  readonly #workers: () => Iterable<Worker>;
  readonly #send: SendToWorker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  /** `workers` lists the workers alive now; the supervisor sends, and tells about messages and exits. */
  constructor(workers: () => Iterable<Worker>, send: SendToWorker) {
    this.#workers = workers;
    this.#send = send;
  }

  /** Calls the handler of `kind` in every connected worker with `payload`. */
  call<R>(kind: string, payload: unknown, options: CallOptions): Promise<CallOutcome<R>> {
    const id = this.#nextId++;
    const message: CallMessage = { svc: 'call', id, kind, payload };
    const waiting = new Map<number, Worker>();
    for (const worker of this.#workers()) {
      if (!worker.isConnected()) continue;
      waiting.set(worker.id, worker);
      // A send that fails means the channel closed: the worker is on its way out, and its exit settles it.
      this.#send(worker, message, () => this.workerExited(worker.id));
    }
    const outcome: CallOutcome<R> = { answers: [], gone: 0, failed: [] };
    if (waiting.size === 0) return Promise.resolve(outcome);
    const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    return new Promise((resolve) => {
      const settle = (): void => {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        for (const [workerId, worker] of waiting) {
          outcome.failed.push({ workerId, reason: `no answer to ${kind} within ${timeoutMs} ms` });
          if (options.onFailure === 'kill') worker.process.kill('SIGKILL');
        }
        waiting.clear();
        settle();
      }, timeoutMs);
      this.#pending.set(id, { waiting, outcome: outcome as CallOutcome<unknown>, onFailure: options.onFailure, settle });
    });
  }

  /** A message from a worker; answers to calls are taken, anything else is ignored. */
  workerMessage(workerId: number, message: unknown): void {
    if (!isWorkerMessage(message) || message.svc !== 'reply') return;
    const pending = this.#pending.get(message.id);
    const worker = pending?.waiting.get(workerId);
    if (pending === undefined || worker === undefined) return;
    pending.waiting.delete(workerId);
    if (message.error === undefined) pending.outcome.answers.push(message.result);
    else {
      pending.outcome.failed.push({ workerId, reason: message.error });
      if (pending.onFailure === 'kill') worker.process.kill('SIGKILL');
    }
    this.#settleIfDone(pending);
  }

  /** A worker exited: it no longer holds anything a call waits for. */
  workerExited(workerId: number): void {
    for (const pending of [...this.#pending.values()]) {
      if (!pending.waiting.delete(workerId)) continue;
      pending.outcome.gone += 1;
      this.#settleIfDone(pending);
    }
  }

  #settleIfDone(pending: Pending): void {
    if (pending.waiting.size === 0) pending.settle();
  }
}
