// A token bucket: the bound on how many refreshes start per second. It holds up to `burst` tokens,
// gains `ratePerSecond` a second (computed from the clock when asked, no timer), and each start
// takes one.
import { requireInRange } from './errors.js';

export class TokenBucket {
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #updatedAtMs: number;

  constructor(ratePerSecond: number, burst: number, now: () => number) {
    this.#ratePerMs = requireInRange('ratePerSecond', ratePerSecond, Number.MIN_VALUE, 1e6) / 1000;
    this.#burst = requireInRange('burst', burst, 1, 1e6);
    this.#now = now;
    this.#tokens = burst;
    this.#updatedAtMs = now();
  }

  /** Takes a token when one is there; false when the bucket is empty. */
  tryTake(): boolean {
    const now = this.#now();
    // A clock that steps back adds nothing rather than removing tokens.
    const elapsedMs = Math.max(0, now - this.#updatedAtMs);
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsedMs * this.#ratePerMs);
    this.#updatedAtMs = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
