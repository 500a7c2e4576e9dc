// The primary of a node that serves its data plane from several processes (node:cluster workers).
// It forks one worker per slot, keeps each slot filled (a worker that dies is logged and forked
// again, after a back-off that grows while it keeps dying), relays the workers' output lines to
// one standard output, and stops the workers on the way out: told to drain and close, then killed
// if they have not exited in time. Calls to every worker (invalidations, metrics) go through
// `calls`. The node stays ready while at least one worker serves.
//
// Connections are handed out by the primary (round robin) or by the kernel (`os`): see
// docs/decisions.md "Data-plane workers" for the measurement that chose the default.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../../observe/logger.js';
import { relayLines, type LineSink } from './line-relay.js';
import { DEFAULT_RESTART_BACKOFF, quickDeathsAfter, restartDelayMs, type RestartBackoff } from './restart-backoff.js';
import { WorkerCalls } from './worker-calls.js';
import { isWorkerMessage, type PeerReplyMessage, type PeerRequestMessage, type WarmWrite, type WorkerMessage } from './worker-messages.js';

/** Who hands the data plane's connections to the workers. */
export type ConnectionDistribution = 'round-robin' | 'os';

/** The environment variable that tells a worker its slot, 0 to workers - 1. */
export const WORKER_SLOT_VARIABLE = 'SVC_WORKER_SLOT';

export interface WorkerSupervisorOptions {
  /** Workers to keep running, at least 1. */
  workers: number;
  /** The module each worker runs, and its arguments. */
  exec: string;
  args?: string[];
  /** Added to the workers' environment (which is the primary's). */
  env?: Record<string, string>;
  logger: Logger;
  /** Where the workers' standard output goes, whole lines. */
  output: LineSink;
  /** Where their standard error goes; the primary's own by default. */
  errorOutput?: LineSink;
  distribution: ConnectionDistribution;
  backoff?: RestartBackoff;
  /** How long a worker may take to drain and exit when stopped before it is killed. */
  stopTimeoutMs?: number;
  /** How long the first start of every worker may take. */
  startTimeoutMs?: number;
  /** Told the number of workers that serve whenever it changes after the first start. */
  onServingChange?: (serving: number) => void;
  /** Applies a worker's change to the warm tier the primary owns; without it such messages are dropped. */
  onWarmWrite?: (write: WarmWrite) => void;
  /** Told when a worker has exited, whatever the reason (before it is forked again). */
  onWorkerExit?: () => void;
  /** Sends a worker's request to a peer (strong mode); `reply` answers that worker. Without it, such requests get no answer. */
  onPeerRequest?: (request: PeerRequestMessage, reply: (message: PeerReplyMessage) => void) => void;
}

/** As long as a drain may take (the node's DRAIN_TIMEOUT_MS), with a margin to close. */
const DEFAULT_STOP_TIMEOUT_MS = 35_000;
const DEFAULT_START_TIMEOUT_MS = 60_000;

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  startedMs: number;
  ready: boolean;
  quickDeaths: number;
  restart: NodeJS.Timeout | undefined;
}

const stderrSink: LineSink = { write: (line) => void process.stderr.write(line) };

export class WorkerSupervisor {
  readonly calls: WorkerCalls;
  readonly #options: WorkerSupervisorOptions;
  readonly #slots: Slot[];
  #stopping = false;
  #restarts = 0;
  #firstStart: { resolve: () => void; reject: (error: Error) => void } | undefined;
  /** What every worker is told once, including those forked later (announce()); one message per kind. */
  #announcements: WorkerMessage[] = [];
  /** What was sent to workers that do not listen yet, in order (see ListeningMessage). */
  readonly #outboxes = new Map<Worker, { message: WorkerMessage; onError: (error: Error) => void }[]>();

  private constructor(options: WorkerSupervisorOptions) {
    this.#options = options;
    this.#slots = Array.from({ length: options.workers }, (_, index) => ({ index, worker: undefined, startedMs: 0, ready: false, quickDeaths: 0, restart: undefined }));
    this.calls = new WorkerCalls(
      () => this.#liveWorkers(),
      (worker, message, onError) => this.#send(worker, message, onError),
    );
  }

  /**
   * Forks every worker and resolves once each said it serves. Rejects (with every worker stopped)
   * when one exits before that or the start takes longer than startTimeoutMs: a worker that cannot
   * start once will not start on a restart either (a port in use, a bad directory).
   */
  static start(options: WorkerSupervisorOptions): Promise<WorkerSupervisor> {
    return WorkerSupervisor.create(options).start();
  }

  /** A supervisor that forks nothing until start(): what is announced meanwhile reaches every worker. */
  static create(options: WorkerSupervisorOptions): WorkerSupervisor {
    if (!Number.isSafeInteger(options.workers) || options.workers < 1) throw new Error(`workers must be an integer of at least 1, got ${options.workers}`);
    if (!cluster.isPrimary) throw new Error('a worker supervisor runs in the primary process only');
    return new WorkerSupervisor(options);
  }

  /** See the static start(); once only. */
  async start(): Promise<WorkerSupervisor> {
    const options = this.#options;
    // Frozen by Node at the first fork, so set before it.
    cluster.schedulingPolicy = options.distribution === 'os' ? cluster.SCHED_NONE : cluster.SCHED_RR;
    cluster.setupPrimary({ exec: options.exec, args: options.args ?? [], silent: true, serialization: 'advanced' });
    const started = new Promise<void>((resolve, reject) => (this.#firstStart = { resolve, reject }));
    const timer = setTimeout(() => this.#failStart(new Error(`the data-plane workers did not start within ${options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS} ms`)), options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    for (const slot of this.#slots) this.#fork(slot);
    try {
      await started;
      return this;
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

  /** Workers forked again after one died, since start. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The process ids of the live workers, by slot (undefined for a slot waiting to fork again). */
  pids(): (number | undefined)[] {
    return this.#slots.map((slot) => slot.worker?.process.pid);
  }

  /**
   * Tells every worker `message` now, and every worker forked from now on as it starts. A message of
   * the kind announced before replaces it for those (a cluster view is told as it is now).
   */
  announce(message: WorkerMessage): void {
    this.#announcements = this.#announcements.filter((earlier) => earlier.svc !== message.svc);
    this.#announcements.push(message);
    for (const worker of this.#liveWorkers()) if (worker.isConnected()) this.#send(worker, message, () => undefined);
  }

  /** Tells every worker to drain and exit; kills those still running after stopTimeoutMs. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const exits: Promise<void>[] = [];
    for (const slot of this.#slots) {
      clearTimeout(slot.restart);
      const worker = slot.worker;
      if (worker === undefined || worker.process.exitCode !== null || worker.process.signalCode !== null) continue;
      exits.push(new Promise((resolve) => worker.once('exit', () => resolve())));
      if (worker.isConnected()) this.#send(worker, { svc: 'stop' }, () => undefined);
      else worker.process.kill('SIGKILL');
    }
    const timer = setTimeout(() => {
      for (const slot of this.#slots) slot.worker?.process.kill('SIGKILL');
    }, this.#options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS);
    await Promise.all(exits);
    clearTimeout(timer);
  }

  #liveWorkers(): Worker[] {
    return this.#slots.flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]));
  }

  #fork(slot: Slot): void {
    slot.restart = undefined;
    const worker = cluster.fork({ ...this.#options.env, [WORKER_SLOT_VARIABLE]: String(slot.index) });
    slot.worker = worker;
    slot.startedMs = Date.now();
    slot.ready = false;
    if (worker.process.stdout) relayLines(worker.process.stdout, this.#options.output);
    if (worker.process.stderr) relayLines(worker.process.stderr, this.#options.errorOutput ?? stderrSink);
    this.#outboxes.set(worker, []);
    // First in its outbox: a worker learns what was announced before anything else.
    for (const message of this.#announcements) this.#send(worker, message, () => undefined);
    worker.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.svc === 'listening') this.#listening(worker);
      else if (message.svc === 'ready') this.#ready(slot, worker);
      else if (message.svc === 'failed') this.#failed(slot, worker, message.message);
      else if (message.svc === 'warm') this.#options.onWarmWrite?.(message);
      else if (message.svc === 'peer-request') this.#options.onPeerRequest?.(message, (reply) => this.#send(worker, reply, () => undefined));
      else this.calls.workerMessage(worker.id, message);
    });
    // 'exit' comes once per worker, however it ended; an 'error' (a failed send) is followed by it.
    worker.on('error', () => undefined);
    worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => this.#exited(slot, worker, code, signal));
  }

  /** Sends now to a worker that listens, else holds the message until it does. */
  #send(worker: Worker, message: WorkerMessage, onError: (error: Error) => void): void {
    const outbox = this.#outboxes.get(worker);
    if (outbox !== undefined) outbox.push({ message, onError });
    else
      worker.send(message, (error: Error | null) => {
        if (error) onError(error);
      });
  }

  #listening(worker: Worker): void {
    const outbox = this.#outboxes.get(worker);
    if (outbox === undefined) return;
    this.#outboxes.delete(worker);
    for (const { message, onError } of outbox) this.#send(worker, message, onError);
  }

  #ready(slot: Slot, worker: Worker): void {
    if (slot.worker !== worker || slot.ready) return;
    slot.ready = true;
    if (this.#firstStart !== undefined && this.#slots.every((each) => each.ready)) {
      this.#firstStart.resolve();
      this.#firstStart = undefined;
    } else if (this.#firstStart === undefined) this.#options.onServingChange?.(this.readyCount);
  }

  /** A worker that cannot start on the first start fails it with its reason (a port in use, say). */
  #failed(slot: Slot, worker: Worker, message: string): void {
    if (slot.worker === worker && this.#firstStart !== undefined) this.#failStart(new Error(message));
  }

  #exited(slot: Slot, worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    this.#outboxes.delete(worker);
    this.calls.workerExited(worker.id);
    this.#options.onWorkerExit?.();
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    const wasReady = slot.ready;
    slot.ready = false;
    if (this.#stopping) return;
    const { logger } = this.#options;
    const exit = { worker: slot.index, pid: worker.process.pid, code, signal };
    if (this.#firstStart !== undefined && !wasReady) {
      this.#failStart(new Error(`data-plane worker ${slot.index} exited before it served (${signal ?? `code ${code}`})`));
      return;
    }
    const backoff = this.#options.backoff ?? DEFAULT_RESTART_BACKOFF;
    slot.quickDeaths = quickDeathsAfter(slot.quickDeaths, Date.now() - slot.startedMs, backoff);
    const delayMs = restartDelayMs(slot.quickDeaths, backoff);
    logger.error({ ...exit, restart_in_ms: delayMs, ready_workers: this.readyCount }, 'data-plane worker exited: forking it again');
    if (wasReady) this.#options.onServingChange?.(this.readyCount);
    this.#restarts += 1;
    slot.restart = setTimeout(() => this.#fork(slot), delayMs);
  }

  #failStart(error: Error): void {
    const firstStart = this.#firstStart;
    this.#firstStart = undefined;
    this.#stopping = true;
    firstStart?.reject(error);
  }
}
