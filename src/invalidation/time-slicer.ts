// Long walks over the cache tiers (the ban lurker, the retention sweep) run in slices of time and
// hand the event loop back between them, so that requests keep being served while a ban or a prune
// goes through a million entries.
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/**
 * A slice of a walk lasts about this long before it yields: under issue 15's bound of 10 ms per
 * stall, with room for the items processed between two clock reads and for a minor GC.
 */
export const SLICE_MS = 3;
/** The clock is read once per this many items, so reading it costs nothing next to the work. */
const ITEMS_PER_CLOCK_READ = 16;

export class TimeSlicer {
  readonly #sliceMs: number;
  #sliceStartMs = performance.now();
  #items = 0;

  constructor(sliceMs: number = SLICE_MS) {
    this.#sliceMs = sliceMs;
  }

  /** Counts one item done; true once the slice is spent, when the caller should `await pause()`. */
  spent(): boolean {
    this.#items += 1;
    if (this.#items % ITEMS_PER_CLOCK_READ !== 0) return false;
    return performance.now() - this.#sliceStartMs >= this.#sliceMs;
  }

  /** Lets everything that waits on the event loop run, then starts a new slice. */
  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.#sliceStartMs = performance.now();
  }
}
