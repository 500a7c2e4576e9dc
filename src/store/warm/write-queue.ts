// The warm tier's bounded write queue. put() and delete() return at once; their writes wait here
// and go to lmdb in batches, one transaction per batch, off the request path. Only puts hold bodies,
// so only puts are bounded: a put arriving when `maxPuts` are waiting is refused (the caller drops and
// counts it). Deletes are never refused: dropping one would let a purged entry come back after a
// restart. One operation is kept per record id, the latest, because each one fully determines what
// the record becomes.

export interface QueuedOp {
  readonly kind: 'put' | 'delete' | 'touch';
}

export interface WriteQueueOptions<Op extends QueuedOp> {
  /** Puts that may wait at once (`writeQueueLength`). */
  maxPuts: number;
  /** Writes one batch in one transaction and resolves once it is durable. */
  commit: (batch: ReadonlyMap<string, Op>) => Promise<void>;
  /** Told about a batch that failed. It may enqueue operations again: the next batch then waits
   * `failedBatchBackoffMs`, so a disk that keeps failing is not retried in a tight loop. */
  onFailed: (batch: ReadonlyMap<string, Op>, error: unknown) => void;
}

/** Pause after a failed batch before the next one (a full or failing disk rarely recovers at once). */
const FAILED_BATCH_BACKOFF_MS = 1000;

export class WriteQueue<Op extends QueuedOp> {
  readonly #options: WriteQueueOptions<Op>;
  #queued = new Map<string, Op>();
  #inFlight: ReadonlyMap<string, Op> = new Map();
  #queuedPuts = 0;
  #inFlightPuts = 0;
  /** Operations enqueued so far, and how many of them a finished batch has covered. */
  #enqueuedCount = 0;
  #settledCount = 0;
  #draining = false;
  readonly #waiters: { until: number; resolve: () => void }[] = [];

  constructor(options: WriteQueueOptions<Op>) {
    this.#options = options;
  }

  /** The latest operation for `id` not yet durable, if any. */
  pending(id: string): Op | undefined {
    return this.#queued.get(id) ?? this.#inFlight.get(id);
  }

  /** Operations waiting or being written. */
  get length(): number {
    return this.#queued.size + this.#inFlight.size;
  }

  /** Whether a put for `id` would be accepted now; replacing a waiting put needs no room. */
  hasRoomForPut(id: string): boolean {
    return this.#queued.get(id)?.kind === 'put' || this.#queuedPuts + this.#inFlightPuts < this.#options.maxPuts;
  }

  enqueue(id: string, op: Op): void {
    if (this.#queued.get(id)?.kind === 'put') this.#queuedPuts -= 1;
    if (op.kind === 'put') this.#queuedPuts += 1;
    this.#queued.set(id, op);
    this.#enqueuedCount += 1;
    if (!this.#draining) {
      this.#draining = true;
      setImmediate(() => void this.#drain());
    }
  }

  /** Resolves once every operation enqueued before the call has been written (or its batch failed). */
  settled(): Promise<void> {
    if (this.#settledCount >= this.#enqueuedCount) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ until: this.#enqueuedCount, resolve }));
  }

  async #drain(): Promise<void> {
    while (this.#queued.size > 0) {
      const batch = this.#queued;
      const covers = this.#enqueuedCount;
      this.#queued = new Map();
      this.#inFlight = batch;
      this.#inFlightPuts = this.#queuedPuts;
      this.#queuedPuts = 0;
      let failed = false;
      try {
        await this.#options.commit(batch);
      } catch (error) {
        failed = true;
        this.#options.onFailed(batch, error);
      }
      this.#inFlight = new Map();
      this.#inFlightPuts = 0;
      this.#settledCount = covers;
      this.#wake();
      if (failed && this.#queued.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, FAILED_BATCH_BACKOFF_MS).unref());
      }
    }
    this.#draining = false;
  }

  #wake(): void {
    for (let i = this.#waiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.#waiters[i];
      if (waiter !== undefined && waiter.until <= this.#settledCount) {
        this.#waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}
