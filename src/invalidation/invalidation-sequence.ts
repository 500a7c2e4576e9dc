// The store gate's memory of invalidations (DESIGN principle 12): every purge, refresh and ban gets
// the next number of one monotonic sequence. A fill notes the number when its origin request starts;
// when it is about to store, it asks whether an invalidation numbered after that covers what it
// fetched. Numbers, not clock times, so two operations in the same millisecond still order, and a
// fill that outlives every time window (a slow client, a 10-minute body) is still refused.
//
// Memory is bounded: per-key records and bans beyond their caps are forgotten oldest first, and the
// gate then refuses every fill that started before the newest number it forgot. That costs a miss,
// never a resurrected object.
import type { CacheEntry } from '../cache/entry.js';
import { banMatches, type Ban } from './ban.js';

/** What the store gate asks of the invalidation engine (create-invalidator.ts). */
export interface StoreGate {
  /** The number of the newest invalidation applied so far; a fill notes it as its origin request starts. */
  invalidationMark(): number;
  /**
   * Whether an invalidation applied after `mark` covers `entry` (a purge or refresh of its key, a ban
   * that matches it), or may have and can no longer be told. A fill that gets true must not store.
   */
  coveredSince(mark: number, entry: Pick<CacheEntry, 'key' | 'tags'>): boolean;
}

/** Keys whose last purge or refresh is remembered: as many as the purge records (create-invalidator.ts). */
export const MAX_KEY_RECORDS = 100_000;
/** Bans remembered: far more than are made while one fill runs. */
export const MAX_BAN_RECORDS = 10_000;

export class InvalidationSequence implements StoreGate {
  #last = 0;
  /** The newest number forgotten: fills marked before it cannot be told apart, so they are refused. */
  #forgottenThrough = 0;
  /** Last purge or refresh number per key; insertion order is number order (a key moves to the end). */
  readonly #byKey = new Map<string, number>();
  /** Bans with their numbers, oldest first. */
  readonly #bans: { number: number; ban: Ban }[] = [];

  constructor(
    private readonly maxKeyRecords = MAX_KEY_RECORDS,
    private readonly maxBanRecords = MAX_BAN_RECORDS,
  ) {}

  invalidationMark(): number {
    return this.#last;
  }

  /** A purge or a refresh of `key` was applied. */
  keyInvalidated(key: string): void {
    const number = ++this.#last;
    this.#byKey.delete(key);
    this.#byKey.set(key, number);
    if (this.#byKey.size <= this.maxKeyRecords) return;
    const [oldestKey, oldestNumber] = this.#byKey.entries().next().value as [string, number];
    this.#byKey.delete(oldestKey);
    this.#forget(oldestNumber);
  }

  banned(ban: Ban): void {
    this.#bans.push({ number: ++this.#last, ban });
    if (this.#bans.length > this.maxBanRecords) this.#forget(this.#bans.shift()!.number);
  }

  coveredSince(mark: number, entry: Pick<CacheEntry, 'key' | 'tags'>): boolean {
    if (mark >= this.#last) return false;
    if (mark < this.#forgottenThrough) return true;
    if ((this.#byKey.get(entry.key) ?? 0) > mark) return true;
    for (let i = this.#bans.length - 1; i >= 0; i -= 1) {
      const { number, ban } = this.#bans[i]!;
      if (number <= mark) break;
      if (banMatches(ban, entry)) return true;
    }
    return false;
  }

  #forget(number: number): void {
    this.#forgottenThrough = Math.max(this.#forgottenThrough, number);
  }
}
