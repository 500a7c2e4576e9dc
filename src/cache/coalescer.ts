// Request coalescing (golang/groupcache singleflight): while one origin fetch for a key runs, later
// requests for the same key wait for its outcome instead of sending their own.

export class Coalescer<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  get size(): number {
    return this.inFlight.size;
  }

  /** The promise of the fetch in flight for `key`, if any. */
  pending(key: string): Promise<T> | undefined {
    return this.inFlight.get(key);
  }

  /** Runs `work` as the one fetch for `key`, unless one is already in flight. */
  run(key: string, work: () => Promise<T>): Promise<T> {
    const existing = this.inFlight.get(key);
    if (existing) return existing;
    const promise = work().finally(() => {
      if (this.inFlight.get(key) === promise) this.inFlight.delete(key);
    });
    this.inFlight.set(key, promise);
    return promise;
  }
}
