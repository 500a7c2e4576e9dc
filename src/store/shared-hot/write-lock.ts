// The hot tier's one write lock, shared by every thread of a node: a word in shared memory that
// holds the id of the thread inside (its threadId + 1, so that 0 means free). Writers are brief: the
// lock covers index changes and the copy of one record. Readers never take it (hot-reader.ts).
//
// A thread that dies inside (terminated, or out of memory) leaves the word set: the main thread,
// which never writes to the tier while workers run and so never waits here, sees the worker exit,
// repairs the tier (SharedHotStore.repairAfter) and frees the lock. A waiting thread sleeps on the
// word (Atomics.wait) and is woken by the release.
import { threadId } from 'node:worker_threads';
import { LOCK, type HotViews } from './hot-memory.js';

/** Spins before sleeping: a holder is usually out within a few microseconds. */
const SPINS = 64;

/** The mark a thread puts in the lock word. */
export function lockMarkOf(thread: number): number {
  return thread + 1;
}

/** This thread's mark in the lock word. */
export const OWN_MARK = lockMarkOf(threadId);

export function acquire(views: HotViews): void {
  const { ints } = views;
  for (let spin = 0; ; spin += 1) {
    const held = Atomics.compareExchange(ints, LOCK, 0, OWN_MARK);
    if (held === 0) return;
    if (held === OWN_MARK) throw new Error('the hot tier lock is not reentrant');
    if (spin >= SPINS) Atomics.wait(ints, LOCK, held, 50);
  }
}

export function release(views: HotViews): void {
  Atomics.store(views.ints, LOCK, 0);
  Atomics.notify(views.ints, LOCK, 1);
}

/** The mark of the thread holding the lock, or 0. */
export function holder(views: HotViews): number {
  return Atomics.load(views.ints, LOCK);
}

/** Takes the lock from `deadMark`, a thread that died holding it; false if it was not holding it. */
export function takeOver(views: HotViews, deadMark: number): boolean {
  return Atomics.compareExchange(views.ints, LOCK, deadMark, OWN_MARK) === deadMark;
}
