// Counts data-plane requests in progress so that drain can wait for them to finish.

export class InFlightRequests {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  begin(): void {
    this.count++;
  }

  end(): void {
    this.count--;
    if (this.count === 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves true once nothing is in flight, or false when `timeoutMs` passes first. */
  async idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }
}
