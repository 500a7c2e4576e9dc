// A data-plane worker's warm tier: the one its primary owns, shared by every worker of the node
// (docs/decisions.md "Data-plane workers"). Lookups read lmdb directly, from the memory map every
// worker shares, so a warm hit costs no round trip. Everything that changes the tier goes to the
// primary, its one writer, which keeps the byte bound and the eviction order: stores and
// deletes as they happen, uses in batches (recency is a hint). The primary checks each store against
// the invalidations made since its fetch began (InvalidationEngine.admissible), since a store sent
// before this worker applied an invalidation can reach the primary after the primary applied it.
//
// So this tier is a CacheStore and a DemotionTarget, and nothing else: counts, sweeps and durability
// are the primary's (its waiting writes are part of them). A put answers `sent`, a delete 0 (reads
// here see the variants until the primary has removed them, and the primary counts them); the
// worker's TieredCache says that the main thread writes this tier, so that its invalidation engine
// sweeps the hot tier only and leaves the flush to the primary.
import type { CacheEntry } from '../../cache/entry.js';
import type { CacheStore, DemotionTarget, PutOutcome } from '../../store/cache-store.js';
import { encodeEntry } from '../../store/warm/record-codec.js';
import type { WarmReader } from '../../store/warm/warm-reader.js';
import type { WarmWrite } from './thread-messages.js';

/** Uses are sent to the primary this often, or sooner when this many wait. */
const USE_BATCH_INTERVAL_MS = 1_000;
const USE_BATCH_MAX = 1_024;

export class WorkerWarmTier implements CacheStore, DemotionTarget {
  /** Variants read since the last batch, as [key, variantKey] under a key joining both. */
  readonly #used = new Map<string, [string, string]>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly reader: WarmReader,
    /** Sends a change to the primary; messages keep their order. */
    private readonly send: (write: WarmWrite) => void,
  ) {
    this.#timer = setInterval(() => this.#sendUses(), USE_BATCH_INTERVAL_MS);
    this.#timer.unref();
  }

  variants(key: string): CacheEntry[] {
    const entries = this.peek(key);
    for (const entry of entries) this.#use(entry);
    return entries;
  }

  peek(key: string): CacheEntry[] {
    const read = this.reader.variantsOf(key);
    // The primary reads the key itself, and deletes the records that fail there too.
    if (read.damaged) this.send({ kind: 'warm', op: 'verify', key });
    return read.entries;
  }

  has(key: string, variantKey: string): boolean {
    return this.reader.has(key, variantKey);
  }

  /**
   * Sent to the primary, which decides: its write queue, the byte bound and the invalidations since
   * the fetch began. Until the write commits, this worker serves the entry from its hot tier.
   */
  put(entry: CacheEntry): PutOutcome {
    this.send({ kind: 'warm', op: 'put', record: encodeEntry(entry) });
    return 'sent';
  }

  /** Sent to the primary, which removes and counts: nothing is gone from this tier's reads yet. */
  delete(key: string, variantKey?: string): number {
    this.send({ kind: 'warm', op: 'delete', key, variantKey });
    return 0;
  }

  /** The uses waiting go now; the reader lets go of the environment. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#sendUses();
    await this.reader.close();
  }

  /** The next read sees all the primary committed: before an invalidation is applied here. */
  renewSnapshot(): void {
    this.reader.renewSnapshot();
  }

  #use(entry: CacheEntry): void {
    this.#used.set(`${entry.key}\0${entry.variantKey}`, [entry.key, entry.variantKey]);
    if (this.#used.size >= USE_BATCH_MAX) this.#sendUses();
  }

  #sendUses(): void {
    if (this.#used.size === 0) return;
    this.send({ kind: 'warm', op: 'use', variants: [...this.#used.values()] });
    this.#used.clear();
  }
}
