// The connections of a pool as slots svc hands out itself: a request is sent only when one of its
// upstream's connections is free, so it never waits inside undici's own queue, which has no timeout
// (a MISS behind slow uploads would hang for as long as they last). The slots are the node's, counted
// in shared memory (src/shared-memory/shared-counters.ts), so that a pool's `connections` bound the
// node's requests in flight to an upstream whichever thread sends them. A request that finds none free
// waits for a release anywhere in the node, for at most the pool's `queue_timeout`.
import type { SharedCounters } from '../shared-memory/shared-counters.js';

export class SlotsTimeoutError extends Error {
  override readonly name = 'SlotsTimeoutError';
}

export class ConnectionSlots<M> {
  /**
   * `perMember` slots for each member (its number of connections), counted in `counters` under
   * `name(member)`: the same name in every thread for the same upstream of the same pool.
   */
  constructor(
    private readonly counters: SharedCounters,
    private readonly perMember: number,
    private readonly name: (member: M) => string,
  ) {}

  /** A free member among `candidates` (taken), waiting for one when none is free. */
  async take(candidates: readonly M[], timeoutMs: number, signal?: AbortSignal): Promise<M> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const member of candidates) {
        if (this.counters.take(this.name(member), this.perMember) !== 'full') return member;
      }
      signal?.throwIfAborted();
      const left = deadline - Date.now();
      if (left <= 0) throw new SlotsTimeoutError(`no connection free within ${timeoutMs} ms`);
      await this.#released(left, signal);
    }
  }

  /** Gives a member's slot back; a request waiting for one, in any thread, tries again. */
  release(member: M): void {
    this.counters.release(this.name(member));
  }

  /** Resolves at the next release in the node (or after `timeoutMs`); rejects when `signal` aborts. */
  #released(timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
    const released = this.counters.waitForRelease(timeoutMs);
    if (signal === undefined) return released;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      void released.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}
