// A lock in shared memory, for the parts of a node its threads share (the hot tier, the limits on
// origin connections and clients): one Int32 word that holds the mark of the thread inside (its
// threadId + 1, so that 0 means free). Holders are brief: a few index changes, or one record copied.
//
// A thread that dies inside (terminated, or out of memory) leaves the word set: the main thread sees
// the worker exit and takes the lock over (takeOver) to repair what it guards and free it. A waiting
// worker sleeps on the word (Atomics.wait) and is woken by the release. The main thread never waits
// long: it learns of a worker's death only from its event loop, which a wait would block, so after
// MAIN_WAIT_MS it gives up with SharedLockBusyError (what it was doing fails and can be retried once
// the repair ran) rather than wait forever.
import { isMainThread, threadId } from 'node:worker_threads';

/** Spins before sleeping: a holder is usually out within a few microseconds. */
const SPINS = 64;
/** The longest the main thread waits for a lock: far beyond any holder, short of a stall. */
const MAIN_WAIT_MS = 2_000;

/** The mark a thread puts in a lock word. */
export function lockMarkOf(thread: number): number {
  return thread + 1;
}

/** This thread's mark. */
export const OWN_MARK = lockMarkOf(threadId);

/** The main thread waited past MAIN_WAIT_MS: a worker holds the lock, probably dead. */
export class SharedLockBusyError extends Error {
  override readonly name = 'SharedLockBusyError';
  readonly code = 'busy';
}

export function acquire(words: Int32Array, at: number): void {
  const deadline = isMainThread ? Date.now() + MAIN_WAIT_MS : Infinity;
  for (let spin = 0; ; spin += 1) {
    const held = Atomics.compareExchange(words, at, 0, OWN_MARK);
    if (held === 0) return;
    if (held === OWN_MARK) throw new Error('a shared lock is not reentrant');
    if (spin < SPINS) continue;
    if (Date.now() > deadline) throw new SharedLockBusyError(`a shared lock is held by thread ${held - 1} for more than ${MAIN_WAIT_MS} ms`);
    Atomics.wait(words, at, held, 50);
  }
}

export function release(words: Int32Array, at: number): void {
  Atomics.store(words, at, 0);
  Atomics.notify(words, at, 1);
}

/** The threadId of the thread holding the lock, or undefined when it is free. */
export function holder(words: Int32Array, at: number): number | undefined {
  const mark = Atomics.load(words, at);
  return mark === 0 ? undefined : mark - 1;
}

/** Takes the lock from thread `deadThreadId`, which died holding it; false if it was not holding it. */
export function takeOver(words: Int32Array, at: number, deadThreadId: number): boolean {
  return deadThreadId >= 0 && Atomics.compareExchange(words, at, lockMarkOf(deadThreadId), OWN_MARK) === lockMarkOf(deadThreadId);
}
