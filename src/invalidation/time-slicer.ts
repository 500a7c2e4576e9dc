// Long walks over the cache tiers (the ban lurker, the retention sweep) run in slices of time and
// hand the event loop back between them, so that requests keep being served while a ban or a prune
// goes through a million entries.
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/**
 * A slice of a walk lasts about this long before it yields. Issue 15 bounds a stall at 10 ms; a
 * slice shares a turn of the event loop with whatever else runs in it, and a minor garbage
 * collection in a heap of a million entries takes up to 6 ms (bench/ban-lurker-stall.ts).
 */
const SLICE_MS = 2;
/** The clock is read once per this many items, so reading it costs nothing next to the work. */
const ITEMS_PER_CLOCK_READ = 8;

export class TimeSlicer {
  #sliceStartMs = performance.now();
  #items = 0;

  /** Counts one item done; true once the slice is spent, when the caller should `await pause()`. */
  spent(): boolean {
    this.#items += 1;
    if (this.#items % ITEMS_PER_CLOCK_READ !== 0) return false;
    return performance.now() - this.#sliceStartMs >= SLICE_MS;
  }

  /** Lets everything that waits on the event loop run, then starts a new slice. */
  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.#sliceStartMs = performance.now();
  }
}
