// The CDN propagation's timers for tests: every wait it asks for is recorded; waits shorter than a
// cool-down (the batch window, retry back-offs) pass at once, and cool-downs are held until the test
// fires them. The jitter's randomness is fixed at 0.5, so each wait has one expected value.
import { COOL_DOWN_BASE_MS, BATCH_WINDOW_MS } from '../../../src/cdn/purge-queue.js';
import type { CancelTimer } from '../../../src/runtime/timers.js';

export class CdnTestTimers {
  /** Every delay asked for, in order. */
  readonly waits: number[] = [];
  readonly #held: { callback: () => void; cancelled: boolean }[] = [];

  setTimer = (callback: () => void, delayMs: number): CancelTimer => {
    this.waits.push(delayMs);
    if (delayMs >= COOL_DOWN_BASE_MS) {
      const held = { callback, cancelled: false };
      this.#held.push(held);
      return () => (held.cancelled = true);
    }
    // Not a wait on anything: a short wait of svc's passes at once, still asynchronously as a timer does.
    const handle = setTimeout(callback, 1);
    return () => clearTimeout(handle);
  };

  random = (): number => 0.5;

  /** The retry back-offs asked for: every wait but batch windows and cool-downs. */
  retryWaits(): number[] {
    return this.waits.filter((ms) => ms !== BATCH_WINDOW_MS && ms < COOL_DOWN_BASE_MS);
  }

  /** The cool-downs asked for. */
  coolDowns(): number[] {
    return this.waits.filter((ms) => ms >= COOL_DOWN_BASE_MS);
  }

  /** Ends every held cool-down now. */
  fireHeld(): void {
    for (const held of this.#held.splice(0)) if (!held.cancelled) held.callback();
  }
}
