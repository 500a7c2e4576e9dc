// The connections of a pool as slots svc hands out itself: a request is sent only when one of its
// upstream's connections is free, so it never waits inside undici's own queue, which has no timeout
// (a MISS behind slow uploads would hang for as long as they last). A request that finds none free
// waits here, first come first served, for at most the pool's `queue_timeout`.

interface Waiter<M> {
  readonly candidates: readonly M[];
  resolve(member: M): void;
}

export class SlotsTimeoutError extends Error {
  override readonly name = 'SlotsTimeoutError';
}

export class ConnectionSlots<M extends object> {
  private readonly busy = new Map<M, number>();
  private readonly waiters: Waiter<M>[] = [];

  /** `perMember` slots for each member: its number of connections. */
  constructor(private readonly perMember: number) {}

  /** A free member among `candidates` (taken), waiting for one when none is free. */
  async take(candidates: readonly M[], timeoutMs: number, signal?: AbortSignal): Promise<M> {
    for (const member of candidates) {
      if ((this.busy.get(member) ?? 0) < this.perMember) {
        this.busy.set(member, (this.busy.get(member) ?? 0) + 1);
        return member;
      }
    }
    signal?.throwIfAborted();
    return new Promise<M>((resolve, reject) => {
      const waiter: Waiter<M> = {
        candidates,
        resolve: (member) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(member);
        },
      };
      const leave = (error: Error): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        signal?.removeEventListener('abort', onAbort);
        clearTimeout(timer);
        reject(error);
      };
      const onAbort = (): void => leave(signal!.reason as Error);
      const timer = setTimeout(() => leave(new SlotsTimeoutError(`no connection free within ${timeoutMs} ms`)), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Gives a member's slot back: to the first waiter that may use that member, else free. */
  release(member: M): void {
    const index = this.waiters.findIndex((waiter) => waiter.candidates.includes(member));
    if (index >= 0) {
      const [waiter] = this.waiters.splice(index, 1);
      waiter!.resolve(member);
      return;
    }
    const left = (this.busy.get(member) ?? 1) - 1;
    if (left === 0) this.busy.delete(member);
    else this.busy.set(member, left);
  }
}
