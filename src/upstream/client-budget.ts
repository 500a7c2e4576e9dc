// In-flight origin requests per client address (config `limits.max_in_flight_per_client`), shared by
// every pool: one client cannot hold a pool's connections with requests of its own, however slowly it
// reads or sends. Hits are not counted; only requests that reach for an origin connection are.

const NOTHING = (): void => undefined;

export class ClientBudget {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly maxInFlight: number) {
    if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxInFlight must be a positive integer, got ${maxInFlight}`);
  }

  /**
   * Counts one more origin request for `address`; returns the function that ends it, or undefined when
   * the client is at its bound. svc's own requests (address '') are not bounded here.
   */
  take(address: string): (() => void) | undefined {
    if (address === '') return NOTHING;
    const current = this.inFlight.get(address) ?? 0;
    if (current >= this.maxInFlight) return undefined;
    this.inFlight.set(address, current + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.inFlight.get(address) ?? 1) - 1;
      // Addresses with nothing in flight are dropped, so the map holds only active clients.
      if (left === 0) this.inFlight.delete(address);
      else this.inFlight.set(address, left);
    };
  }
}
