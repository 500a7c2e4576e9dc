// Counts that every thread of a node shares, by key: the origin requests in flight on each upstream's
// connections, and per client address (src/upstream/). A node's limits are the node's, however many
// threads serve it (DESIGN principle 14): a pool of 64 connections is 64 for the node, not per thread.
//
// Each entry keeps its key's 52-bit hash (no string) and one count per thread, so that when a thread
// dies with requests in flight, the main thread clears that thread's counts (clearThread) and nothing
// stays taken for ever. Entries are found by linear probing over a bounded window; an entry whose
// counts are all zero is free for another key. All of it is read and written under one lock
// (shared-lock.ts). A release bumps a generation word and wakes whoever waits for one (waitForRelease).
import { acquire, release, takeOver } from './shared-lock.js';
import { wideHash } from './key-hash.js';

const LOCK = 0;
const GENERATION = 1;
const CONTROL_WORDS = 2;
/** Entries probed for a key: a table this crowded around a key admits it without counting (fails open). */
const PROBE_WINDOW = 128;

/** The memory of a table, made once by the main thread and handed to every thread. */
export interface CountersMemory {
  readonly control: SharedArrayBuffer;
  readonly keys: SharedArrayBuffer;
  readonly counts: SharedArrayBuffer;
  /** Counting threads: the main thread (column 0) and each worker (column slot + 1). */
  readonly columns: number;
}

export function createCountersMemory(entries: number, columns: number): CountersMemory {
  return {
    control: new SharedArrayBuffer(CONTROL_WORDS * 4),
    keys: new SharedArrayBuffer(entries * 8),
    counts: new SharedArrayBuffer(entries * columns * 4),
    columns,
  };
}

/** What take() did: counted, refused at the bound, or admitted uncounted (no free entry near the key). */
export type Take = 'taken' | 'full' | 'uncounted';

export class SharedCounters {
  readonly #control: Int32Array;
  readonly #keys: Float64Array;
  readonly #counts: Int32Array;
  readonly #columns: number;
  readonly #column: number;

  /** A view of `memory` for the thread that counts in `column`. */
  constructor(memory: CountersMemory, column: number) {
    this.#control = new Int32Array(memory.control);
    this.#keys = new Float64Array(memory.keys);
    this.#counts = new Int32Array(memory.counts);
    this.#columns = memory.columns;
    if (!Number.isSafeInteger(column) || column < 0 || column >= memory.columns) throw new RangeError(`column ${column} is not one of the table's ${memory.columns}`);
    this.#column = column;
  }

  /** Counts one more for `key` unless the node already counts `max` for it. */
  take(key: string, max: number): Take {
    const hash = wideHash(key) + 1;
    acquire(this.#control, LOCK);
    try {
      const entry = this.#find(hash, true);
      if (entry < 0) return 'uncounted';
      if (this.#total(entry) >= max) return 'full';
      this.#keys[entry] = hash;
      this.#counts[entry * this.#columns + this.#column]! += 1;
      return 'taken';
    } finally {
      release(this.#control, LOCK);
    }
  }

  /** Gives back one count this thread took for `key`, and wakes the threads waiting for one. */
  release(key: string): void {
    const hash = wideHash(key) + 1;
    acquire(this.#control, LOCK);
    try {
      const entry = this.#find(hash, false);
      const at = entry * this.#columns + this.#column;
      if (entry >= 0 && this.#counts[at]! > 0) this.#counts[at]! -= 1;
    } finally {
      release(this.#control, LOCK);
    }
    this.#wake();
  }

  /** The node's count for `key`. */
  count(key: string): number {
    const hash = wideHash(key) + 1;
    acquire(this.#control, LOCK);
    try {
      const entry = this.#find(hash, false);
      return entry < 0 ? 0 : this.#total(entry);
    } finally {
      release(this.#control, LOCK);
    }
  }

  /**
   * Resolves after the next release anywhere in the node, or after `timeoutMs`: a thread waiting for a
   * free count tries again then.
   */
  async waitForRelease(timeoutMs: number): Promise<void> {
    const generation = Atomics.load(this.#control, GENERATION);
    const waited = Atomics.waitAsync(this.#control, GENERATION, generation, timeoutMs);
    if (waited.async) await waited.value;
  }

  /**
   * For the main thread, after the worker counting in `column` (thread `threadId`) died: its counts
   * are dropped, and a lock it held is taken over first.
   */
  clearThread(column: number, threadId: number): void {
    if (!takeOver(this.#control, LOCK, threadId)) acquire(this.#control, LOCK);
    try {
      for (let entry = 0; entry < this.#keys.length; entry += 1) this.#counts[entry * this.#columns + column] = 0;
    } finally {
      release(this.#control, LOCK);
    }
    this.#wake();
  }

  /** The entry of `hash`; with `claim`, else the first entry free for it in its window. -1 when none. */
  #find(hash: number, claim: boolean): number {
    const size = this.#keys.length;
    let free = -1;
    for (let step = 0, entry = hash % size; step < PROBE_WINDOW && step < size; step += 1, entry = (entry + 1) % size) {
      const key = this.#keys[entry]!;
      if (key === hash) return entry;
      if (claim && free < 0 && (key === 0 || this.#total(entry) === 0)) free = entry;
      if (key === 0) break;
    }
    return free;
  }

  #total(entry: number): number {
    let total = 0;
    for (let column = 0; column < this.#columns; column += 1) total += this.#counts[entry * this.#columns + column]!;
    return total;
  }

  #wake(): void {
    Atomics.add(this.#control, GENERATION, 1);
    Atomics.notify(this.#control, GENERATION);
  }
}
