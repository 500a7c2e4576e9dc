// Eager eviction (spec §1.1) that never stalls the node: the ban lurker (Varnish's name for it) walks
// the hot tier in time slices that yield to the event loop (time-slicer.ts) and deletes, with their
// warm copies, the entries that new bans hide. A ban is in the lazy check before it is queued here,
// so an entry the walk has not reached yet is already never served. Bans queued while a walk runs are
// walked together in the next one. A walk reads the hot tier's summaries (key, variant, fetch time,
// tags), never a body: the tier is the node's one, shared by its threads, and walked once.
import type { TieredCache } from '../store/tiered-cache.js';
import type { Ban } from './ban.js';
import { BanList } from './ban-list.js';
import { TimeSlicer } from './time-slicer.js';

/**
 * Evictions between two waits for the warm tier's writes: each eviction queues a delete on disk, and
 * a ban over a million entries must not pile up a million of them in memory.
 */
const EVICTIONS_PER_WARM_FLUSH = 16_384;

interface Queued {
  ban: Ban;
  /** Resolves with the hot entries the ban evicted, once its walk is over. */
  done: (evicted: number) => void;
}

export interface BanLurkerOptions {
  cache: TieredCache;
  /** Told of a walk that failed (a bug); the bans stay in force through the lazy check. */
  onError: (error: unknown) => void;
}

export class BanLurker {
  readonly #cache: TieredCache;
  readonly #onError: (error: unknown) => void;
  #queue: Queued[] = [];
  /** The walk under way, if any. */
  #walking: Promise<void> | undefined;
  #stopped = false;

  constructor(options: BanLurkerOptions) {
    this.#cache = options.cache;
    this.#onError = options.onError;
  }

  /**
   * Queues the ban's eager eviction. Resolves once it is done with the number of hot entries the ban
   * evicted (also counted in `ban.stats.evictedEntries`), or with the number so far if the lurker
   * stops first. The walk starts at once: a hot tier smaller than one slice is walked before this
   * returns.
   */
  evict(ban: Ban): Promise<number> {
    if (this.#stopped) return Promise.resolve(ban.stats.evictedEntries);
    const evicted = new Promise<number>((done) => this.#queue.push({ ban, done }));
    this.#walking ??= this.#walkAll().finally(() => {
      this.#walking = undefined;
    });
    return evicted;
  }

  /** Abandons the walk under way (its bans stay in the lazy check) and resolves what waits. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#walking;
  }

  async #walkAll(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      try {
        if (!this.#stopped) await this.#walk(batch.map((queued) => queued.ban));
      } catch (error) {
        this.#onError(error);
      }
      for (const { ban, done } of batch) done(ban.stats.evictedEntries);
    }
  }

  async #walk(bans: readonly Ban[]): Promise<void> {
    const list = new BanList({ rememberChecks: false });
    for (const ban of bans) list.add(ban);
    const slicer = new TimeSlicer();
    let evictions = 0;
    for (const entry of this.#cache.hot.summaries()) {
      const ban = list.hides(entry);
      if (ban !== undefined) {
        this.#cache.delete(entry.key, entry.variantKey);
        ban.stats.evictedEntries += 1;
        evictions += 1;
        if (evictions % EVICTIONS_PER_WARM_FLUSH === 0 && this.#cache.ownedWarm !== undefined) {
          await this.#cache.ownedWarm.flush();
          if (this.#stopped) return;
        }
      }
      if (slicer.spent()) {
        await slicer.pause();
        if (this.#stopped) return;
      }
    }
  }
}
