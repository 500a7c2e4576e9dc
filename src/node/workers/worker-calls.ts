// The main thread's side of a call to every data-plane worker: it sends one message to each live
// worker and resolves only once each of them answered, exited, or was dealt with after the timeout.
// Used for what must be true in every worker before the admin API answers (a purge, a ban, a refresh
// has been applied everywhere) and for what must be gathered from every worker (metrics).
//
// The rules, so that "applied in every worker" holds without an exception:
// - the call goes to every worker alive at the time, ready or still starting (a starting worker
//   holds calls until its handlers are set, see main-channel.ts);
// - a worker that exits before answering holds no state any more: it is counted as gone, and its
//   replacement takes its state from the main thread when it starts;
// - with `onFailure: 'terminate'`, a worker that does not answer within the timeout, whose handler
//   failed or whose answer does not fit the table is terminated: a worker that may have missed an
//   invalidation must not serve again. With `onFailure: 'report'` (gathering figures) it is counted.
import type { Worker } from 'node:worker_threads';
import { checkCall, type CallName, type CallPayload, type CallResult, type DownMessage, type UpMessage } from './thread-messages.js';

/** How long a call waits for each worker by default; a worker answers in well under a millisecond. */
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;

export interface CallOptions {
  /** How long to wait for every answer. */
  timeoutMs?: number;
  /** What happens to a worker that did not answer in time or failed: terminated, or only reported. */
  onFailure: 'terminate' | 'report';
}

export interface CallOutcome<R> {
  /** The answers, one per worker that answered, in no particular order. */
  answers: R[];
  /** Workers that exited before they answered. */
  gone: number;
  /** Workers that did not answer within the timeout, or failed (with the reason). */
  failed: { threadId: number; reason: string }[];
}

interface Pending {
  readonly call: CallName;
  readonly waiting: Map<number, Worker>;
  readonly outcome: CallOutcome<unknown>;
  readonly onFailure: CallOptions['onFailure'];
  readonly settle: () => void;
}

export class WorkerCalls {
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  /** `workers` lists the workers alive now (by threadId); the supervisor tells about replies and exits. */
  constructor(private readonly workers: () => ReadonlyMap<number, Worker>) {}

  /** Calls `call` in every live worker with `payload`. */
  call<K extends CallName>(call: K, payload: CallPayload<K>, options: CallOptions): Promise<CallOutcome<CallResult<K>>> {
    const id = this.#nextId++;
    const message: DownMessage = { kind: 'call', id, call, payload };
    const waiting = new Map(this.workers());
    for (const worker of waiting.values()) worker.postMessage(message);
    const outcome: CallOutcome<CallResult<K>> = { answers: [], gone: 0, failed: [] };
    if (waiting.size === 0) return Promise.resolve(outcome);
    const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    return new Promise((resolve) => {
      const settle = (): void => {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        for (const [threadId, worker] of waiting) this.#fail(pending, threadId, worker, `no answer to ${call} within ${timeoutMs} ms`);
        waiting.clear();
        settle();
      }, timeoutMs);
      const pending: Pending = { call, waiting, outcome: outcome as CallOutcome<unknown>, onFailure: options.onFailure, settle };
      this.#pending.set(id, pending);
    });
  }

  /** A worker's reply to a call. */
  reply(threadId: number, message: Extract<UpMessage, { kind: 'reply' }>): void {
    const pending = this.#pending.get(message.id);
    const worker = pending?.waiting.get(threadId);
    if (pending === undefined || worker === undefined) return;
    pending.waiting.delete(threadId);
    const result = message.error === undefined ? checkCall(pending.call, 'result', message.result) : undefined;
    if (result?.ok) pending.outcome.answers.push(result.message);
    else this.#fail(pending, threadId, worker, message.error ? `${message.error.code}: ${message.error.message}` : `the answer does not fit: ${result?.ok === false ? result.issue : ''}`);
    if (pending.waiting.size === 0) pending.settle();
  }

  /** A worker exited: it no longer holds anything a call waits for. */
  workerExited(threadId: number): void {
    for (const pending of [...this.#pending.values()]) {
      if (!pending.waiting.delete(threadId)) continue;
      pending.outcome.gone += 1;
      if (pending.waiting.size === 0) pending.settle();
    }
  }

  #fail(pending: Pending, threadId: number, worker: Worker, reason: string): void {
    pending.outcome.failed.push({ threadId, reason });
    if (pending.onFailure === 'terminate') void worker.terminate();
  }
}
