// The main thread's keeper of a node's data-plane worker threads. It starts one worker per slot,
// keeps each slot filled (a worker that dies is logged and started again, after a back-off that grows
// while it keeps dying), relays the workers' output lines to one standard output, and stops the
// workers on the way out: told to drain and close, then terminated if they have not exited in time.
// Calls to every worker (invalidations, metrics) go through `calls`. The node stays ready while at
// least one worker serves.
//
// Each worker listens on the data-plane port itself (SO_REUSEPORT): the kernel hands out the
// connections, and no thread relays them (docs/decisions.md "Data-plane workers").
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../observe/logger.js';
import { relayLines, type LineSink } from './line-relay.js';
import { DEFAULT_RESTART_BACKOFF, quickDeathsAfter, restartDelayMs, type RestartBackoff } from './restart-backoff.js';
import { checkUp, threadError, type DownMessage, type ServedReport, type UpMessage, type WarmWrite } from './thread-messages.js';
import { WorkerCalls } from './worker-calls.js';
import { STOP_GRACE_MS } from '../listeners.js';

export interface WorkerSupervisorOptions {
  /** Workers to keep running, at least 1. */
  workers: number;
  /** The module each worker runs. */
  module: URL;
  /** What each worker is given (`workerData`), with its slot. */
  data: (slot: number) => Record<string, unknown>;
  /** The workers' environment. */
  env?: NodeJS.ProcessEnv | undefined;
  logger: Logger;
  /** Where the workers' standard output goes, whole lines. */
  output: LineSink;
  backoff?: RestartBackoff;
  /** How long a worker may take to drain and exit when stopped before it is terminated. */
  stopTimeoutMs?: number;
  /** How long the first start of every worker may take. */
  startTimeoutMs?: number;
  /** Told the number of workers that serve whenever it changes after the first start. */
  onServingChange?: (serving: number) => void;
  /** Applies a worker's change to the warm tier the main thread owns. */
  onWarmWrite?: (write: WarmWrite) => void;
  /** Told of a worker's hits on refresh-enabled routes. */
  onServed?: (report: ServedReport) => void;
  /** Told when a worker has exited, whatever the reason (before it is started again). */
  onWorkerExit?: (slot: number, threadId: number) => void;
  /** Sends a worker's request to a peer (strong mode); `reply` answers that worker. */
  onPeerRequest?: (request: Extract<UpMessage, { kind: 'peer-request' }>, reply: (message: DownMessage) => void) => void;
}

/**
 * A worker told to stop lets its busy connections finish for the stop's grace, cuts them, and closes
 * what it opened: one still running 2 s after the grace is stuck somewhere, and is terminated.
 */
const DEFAULT_STOP_TIMEOUT_MS = STOP_GRACE_MS + 2_000;
const DEFAULT_START_TIMEOUT_MS = 60_000;

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  startedMs: number;
  ready: boolean;
  quickDeaths: number;
  restart: NodeJS.Timeout | undefined;
}

export class WorkerSupervisor {
  readonly calls: WorkerCalls;
  readonly #options: WorkerSupervisorOptions;
  readonly #slots: Slot[];
  /** Live workers by threadId. */
  readonly #live = new Map<number, Worker>();
  #stopping = false;
  #restarts = 0;
  #firstStart: { resolve: () => void; reject: (error: Error) => void } | undefined;
  /** What every worker is told once, including those started later (announce()); one message per kind. */
  readonly #announcements = new Map<DownMessage['kind'], DownMessage>();

  constructor(options: WorkerSupervisorOptions) {
    if (!Number.isSafeInteger(options.workers) || options.workers < 1) throw new Error(`workers must be an integer of at least 1, got ${options.workers}`);
    this.#options = options;
    this.#slots = Array.from({ length: options.workers }, (_, index) => ({ index, worker: undefined, startedMs: 0, ready: false, quickDeaths: 0, restart: undefined }));
    this.calls = new WorkerCalls(() => this.#live);
  }

  /**
   * Starts every worker and resolves once each said it serves. Rejects (with every worker stopped)
   * when one fails or exits before that, or the start takes longer than startTimeoutMs: a worker that
   * cannot start once will not start on a restart either.
   */
  async start(): Promise<void> {
    const options = this.#options;
    const started = new Promise<void>((resolve, reject) => (this.#firstStart = { resolve, reject }));
    const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const timer = setTimeout(() => this.#failStart(new Error(`the data-plane workers did not start within ${timeoutMs} ms`)), timeoutMs);
    try {
      for (const slot of this.#slots) this.#begin(slot);
      await started;
    } catch (error) {
      await this.stop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Workers that serve now. The node is ready while this is at least 1. */
  get readyCount(): number {
    return this.#slots.filter((slot) => slot.ready).length;
  }

  /** Workers started again after one died, since start. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The threadIds of the live workers, by slot (undefined for a slot waiting to start again). */
  threadIds(): (number | undefined)[] {
    return this.#slots.map((slot) => slot.worker?.threadId);
  }

  /** Terminates the worker of `slot` (tests of crash containment, and a worker that must not serve). */
  terminate(slot: number): Promise<number> | undefined {
    return this.#slots[slot]?.worker?.terminate();
  }

  /**
   * Tells every worker `message` now, and every worker started from now on as it starts. A message of
   * the kind announced before replaces it for those (a cluster view is told as it is now).
   */
  announce(message: DownMessage): void {
    this.#announcements.set(message.kind, message);
    for (const worker of this.#live.values()) worker.postMessage(message);
  }

  /** Tells every worker to drain and exit; terminates those still running after stopTimeoutMs. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const exits: Promise<void>[] = [];
    for (const slot of this.#slots) {
      clearTimeout(slot.restart);
      const worker = slot.worker;
      if (worker === undefined) continue;
      exits.push(new Promise((resolve) => worker.once('exit', () => resolve())));
      worker.postMessage({ kind: 'stop' } satisfies DownMessage);
    }
    const timer = setTimeout(() => {
      for (const slot of this.#slots) void slot.worker?.terminate();
    }, this.#options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS);
    await Promise.all(exits);
    clearTimeout(timer);
  }

  #begin(slot: Slot): void {
    slot.restart = undefined;
    const worker = new Worker(this.#options.module, { workerData: { ...this.#options.data(slot.index), slot: slot.index }, env: this.#options.env ?? process.env, stdout: true });
    const threadId = worker.threadId;
    slot.worker = worker;
    slot.startedMs = Date.now();
    slot.ready = false;
    this.#live.set(threadId, worker);
    relayLines(worker.stdout, this.#options.output);
    // First in its queue: a worker learns what was announced before anything else.
    for (const message of this.#announcements.values()) worker.postMessage(message);
    worker.on('message', (data: unknown) => this.#received(slot, worker, threadId, data));
    // An uncaught error ends the worker; 'exit' follows and starts it again.
    worker.on('error', (error) => this.#options.logger.error({ worker: slot.index, err: error }, 'a data-plane worker failed'));
    worker.once('exit', (code) => this.#exited(slot, worker, threadId, code));
  }

  #received(slot: Slot, worker: Worker, threadId: number, data: unknown): void {
    const checked = checkUp(data);
    if (!checked.ok) {
      this.#options.logger.error({ worker: slot.index, issue: checked.issue }, 'a data-plane worker sent a message that does not fit: dropped');
      return;
    }
    const message = checked.message;
    switch (message.kind) {
      case 'reply':
        this.calls.reply(threadId, message);
        return;
      case 'ready':
        this.#ready(slot, worker);
        return;
      case 'failed':
        if (slot.worker === worker && this.#firstStart !== undefined) this.#failStart(new Error(message.error.message));
        return;
      case 'warm':
        this.#options.onWarmWrite?.(message);
        return;
      case 'served':
        this.#options.onServed?.(message);
        return;
      case 'peer-request':
        if (this.#options.onPeerRequest) this.#options.onPeerRequest(message, (reply) => worker.postMessage(reply));
        else worker.postMessage({ kind: 'peer-reply', id: message.id, error: threadError(new Error('peer requests are not relayed')) } satisfies DownMessage);
    }
  }

  #ready(slot: Slot, worker: Worker): void {
    if (slot.worker !== worker || slot.ready) return;
    slot.ready = true;
    if (this.#firstStart !== undefined && this.#slots.every((each) => each.ready)) {
      this.#firstStart.resolve();
      this.#firstStart = undefined;
    } else if (this.#firstStart === undefined) this.#options.onServingChange?.(this.readyCount);
  }

  #exited(slot: Slot, worker: Worker, threadId: number, code: number): void {
    this.#live.delete(threadId);
    this.calls.workerExited(threadId);
    this.#options.onWorkerExit?.(slot.index, threadId);
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    const wasReady = slot.ready;
    slot.ready = false;
    if (this.#stopping) return;
    if (this.#firstStart !== undefined && !wasReady) {
      this.#failStart(new Error(`data-plane worker ${slot.index} exited before it served (code ${code})`));
      return;
    }
    const backoff = this.#options.backoff ?? DEFAULT_RESTART_BACKOFF;
    slot.quickDeaths = quickDeathsAfter(slot.quickDeaths, Date.now() - slot.startedMs, backoff);
    const delayMs = restartDelayMs(slot.quickDeaths, backoff);
    this.#options.logger.error({ worker: slot.index, thread: threadId, code, restart_in_ms: delayMs, ready_workers: this.readyCount }, 'data-plane worker exited: starting it again');
    if (wasReady) this.#options.onServingChange?.(this.readyCount);
    this.#restarts += 1;
    slot.restart = setTimeout(() => this.#begin(slot), delayMs);
  }

  #failStart(error: Error): void {
    const firstStart = this.#firstStart;
    this.#firstStart = undefined;
    this.#stopping = true;
    firstStart?.reject(error);
  }
}
