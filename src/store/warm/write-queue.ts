// The warm tier's bounded write queue. put() and delete() return at once; their writes wait here
// and go to lmdb in batches, one transaction per batch, off the request path. Only puts hold bodies,
// so only puts are bounded: a put arriving when `maxPuts` are waiting is refused (the caller drops and
// counts it). Deletes are never refused: dropping one would let a purged entry come back after a
// restart. One operation is kept per record id, the latest, because each one fully determines what
// the record becomes.
// A batch is bounded too (MAX_BATCH_OPS, MAX_BATCH_PUT_BYTES): its transaction runs on the event
// loop, and a ban evicting a million entries queues a million deletes, which must reach disk in
// slices of a few milliseconds, not in one transaction that holds the loop for a second.

export interface QueuedOp {
  readonly kind: 'put' | 'delete' | 'touch';
  /** For a put: the bytes it writes (what bounds a batch besides its number of operations). */
  readonly sizeBytes?: number;
}

export interface WriteQueueOptions<Op extends QueuedOp> {
  /** Puts that may wait at once (`writeQueueLength`). */
  maxPuts: number;
  /** Writes one batch in one transaction and resolves once it is durable. */
  commit: (batch: ReadonlyMap<string, Op>) => Promise<void>;
  /** Told about a batch that failed. It may enqueue operations again: the next batch then waits
   * `failedBatchBackoffMs`, so a disk that keeps failing is not retried in a tight loop. */
  onFailed: (batch: ReadonlyMap<string, Op>, error: unknown) => void;
  /**
   * The group of an id (the warm store's: the key prefix every variant of a key shares), when the
   * owner asks for the waiting operations of a group (pendingIn).
   */
  groupOf?: (id: string) => string;
}

/** Pause after a failed batch before the next one (a full or failing disk rarely recovers at once). */
const FAILED_BATCH_BACKOFF_MS = 1000;
/** Operations per transaction at most: 512 deletes take about 3.5 ms of the event loop in lmdb, 1,024 about 7. */
export const MAX_BATCH_OPS = 512;
/** Bytes of puts per transaction at most (a batch holds at least one put, whatever its size). */
export const MAX_BATCH_PUT_BYTES = 4 * 1024 * 1024;

export class WriteQueue<Op extends QueuedOp> {
  readonly #options: WriteQueueOptions<Op>;
  /**
   * Waiting operations in the order their record first got one: a replaced operation keeps its
   * place, so the front is always the one waiting longest (what settled() needs).
   */
  #queued = new Map<string, Op>();
  /** For each waiting record, the enqueue number of the first operation it got while waiting. */
  readonly #firstEnqueued = new Map<string, number>();
  #inFlight: ReadonlyMap<string, Op> = new Map();
  #queuedPuts = 0;
  #inFlightPuts = 0;
  /** Operations enqueued so far, and how many of them are known to be written (or failed). */
  #enqueuedCount = 0;
  #settledCount = 0;
  #draining = false;
  readonly #waiters: { until: number; resolve: () => void }[] = [];
  /** The ids waiting or being written, by group (only with `groupOf`); most groups hold one id. */
  readonly #groups = new Map<string, string | Set<string>>();

  constructor(options: WriteQueueOptions<Op>) {
    this.#options = options;
  }

  /** The latest operation for `id` not yet durable, if any. */
  pending(id: string): Op | undefined {
    return this.#queued.get(id) ?? this.#inFlight.get(id);
  }

  /** The ids of a group that have an operation waiting or being written. */
  pendingIn(group: string): readonly string[] {
    const ids = this.#groups.get(group);
    return ids === undefined ? [] : typeof ids === 'string' ? [ids] : [...ids];
  }

  /** Every operation not yet durable, the latest for each id. */
  *pendingOps(): Generator<[string, Op]> {
    for (const [id, op] of this.#inFlight) if (!this.#queued.has(id)) yield [id, op];
    yield* this.#queued;
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
    this.#enqueuedCount += 1;
    if (!this.#firstEnqueued.has(id)) this.#firstEnqueued.set(id, this.#enqueuedCount);
    this.#queued.set(id, op);
    this.#joinGroup(id);
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
      const batch = this.#takeBatch();
      let failed = false;
      try {
        await this.#options.commit(batch);
      } catch (error) {
        failed = true;
        this.#options.onFailed(batch, error);
      }
      for (const id of batch.keys()) if (!this.#queued.has(id)) this.#leaveGroup(id);
      this.#inFlight = new Map();
      this.#inFlightPuts = 0;
      // Everything enqueued before the first operation still waiting is now written.
      const front = this.#queued.keys().next();
      this.#settledCount = front.done === true ? this.#enqueuedCount : (this.#firstEnqueued.get(front.value) as number) - 1;
      this.#wake();
      if (failed && this.#queued.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, FAILED_BATCH_BACKOFF_MS).unref());
      }
    }
    this.#draining = false;
  }

  /** Moves the operations waiting longest into the in-flight batch, within the batch bounds. */
  #takeBatch(): ReadonlyMap<string, Op> {
    const batch = new Map<string, Op>();
    let putBytes = 0;
    let puts = 0;
    for (const [id, op] of this.#queued) {
      const bytes = op.kind === 'put' ? (op.sizeBytes ?? 0) : 0;
      if (batch.size >= MAX_BATCH_OPS || (batch.size > 0 && bytes > 0 && putBytes + bytes > MAX_BATCH_PUT_BYTES)) break;
      batch.set(id, op);
      putBytes += bytes;
      if (op.kind === 'put') puts += 1;
    }
    for (const id of batch.keys()) {
      this.#queued.delete(id);
      this.#firstEnqueued.delete(id);
    }
    this.#inFlight = batch;
    this.#inFlightPuts = puts;
    this.#queuedPuts -= puts;
    return batch;
  }

  #joinGroup(id: string): void {
    if (this.#options.groupOf === undefined) return;
    const group = this.#options.groupOf(id);
    const ids = this.#groups.get(group);
    if (ids === undefined) this.#groups.set(group, id);
    else if (typeof ids !== 'string') ids.add(id);
    else if (ids !== id) this.#groups.set(group, new Set([ids, id]));
  }

  #leaveGroup(id: string): void {
    if (this.#options.groupOf === undefined) return;
    const group = this.#options.groupOf(id);
    const ids = this.#groups.get(group);
    if (ids === id) this.#groups.delete(group);
    if (typeof ids !== 'object') return;
    ids.delete(id);
    if (ids.size === 0) this.#groups.delete(group);
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
