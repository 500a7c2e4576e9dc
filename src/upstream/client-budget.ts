// In-flight origin requests per client address (config `limits.max_in_flight_per_client`), shared by
// every pool and every thread of the node (counted in shared memory): one client cannot hold a pool's
// connections with requests of its own, however slowly it reads or sends, and however many threads
// its connections land on. Hits are not counted; only requests that reach for an origin connection are.
import type { SharedCounters } from '../shared-memory/shared-counters.js';

const NOTHING = (): void => undefined;

export class ClientBudget {
  constructor(
    private readonly counters: SharedCounters,
    private readonly maxInFlight: number,
  ) {
    if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxInFlight must be a positive integer, got ${maxInFlight}`);
  }

  /**
   * Counts one more origin request for `address`; returns the function that ends it, or undefined when
   * the client is at its bound. svc's own requests (address '') are not bounded here.
   */
  take(address: string): (() => void) | undefined {
    if (address === '') return NOTHING;
    const taken = this.counters.take(address, this.maxInFlight);
    if (taken === 'full') return undefined;
    if (taken === 'uncounted') return NOTHING;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.counters.release(address);
    };
  }
}
