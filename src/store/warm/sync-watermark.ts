// The warm tier's durability watermark (`lastSyncMs`, svc_wal_last_sync_timestamp_seconds): a time
// before which every write made to the tier is on disk. It is what lets an operator, or a test, say
// "an answer stored at T survives a kill -9 once the watermark reaches T" (docs/operations.md
// "Durability").
//
// The time of the last commit is not such a time: a write queued while a batch was being written
// is not in it, and a data-plane thread's store is still a message on its way to the main thread.
// So a step of the watermark reads the clock first, then waits until every write other threads made
// before that time has arrived (they answer a call; their stores go out on the same channel before
// the answer) and until the queue has written everything it held. Only then does the watermark move,
// to just before the time read: the clock counts whole milliseconds, and a write in the millisecond
// read may have come after the read. A step follows every batch, and one is taken every
// STEP_INTERVAL_MS besides: a client may finish reading an answer well after its store was queued,
// and the watermark must pass that time too, whether or not anything is written after it.

/** At most this long between steps: how far behind the clock the watermark lags while all is well. */
export const STEP_INTERVAL_MS = 250;

export class SyncWatermark {
  #ms: number;
  #stepping = false;
  #again = false;
  #stopped = false;
  readonly #interval: NodeJS.Timeout;
  /** Resolves true once every write other threads made before the call has reached this store. */
  #remoteWritesArrived: () => Promise<boolean> = () => Promise.resolve(true);

  constructor(
    private readonly now: () => number,
    /** Resolves once every write queued before the call is on disk. */
    private readonly settled: () => Promise<void>,
  ) {
    // Nothing was written by this process yet: all of it (none) is on disk.
    this.#ms = now();
    this.#interval = setInterval(() => this.advance(), STEP_INTERVAL_MS);
    this.#interval.unref();
  }

  get ms(): number {
    return this.#ms;
  }

  /** Other threads write through this store by message: `arrived` tells when theirs are in (false: it cannot tell). */
  setRemoteWriters(arrived: () => Promise<boolean>): void {
    this.#remoteWritesArrived = arrived;
  }

  /** A step forward, one at a time: asked for during a step, another follows it. */
  advance(): void {
    if (this.#stopped) return;
    if (this.#stepping) {
      this.#again = true;
      return;
    }
    this.#stepping = true;
    void this.#step();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#interval);
  }

  async #step(): Promise<void> {
    do {
      this.#again = false;
      const sinceMs = this.now();
      const arrived = await this.#remoteWritesArrived().catch(() => false);
      await this.settled();
      if (arrived) this.#ms = Math.max(this.#ms, sinceMs - 1);
    } while (this.#again && !this.#stopped);
    this.#stepping = false;
  }
}
