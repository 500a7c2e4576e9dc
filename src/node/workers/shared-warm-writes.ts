// The primary's side of the warm tier its data-plane workers share: it applies what they send
// (worker-warm-tier.ts) to the store it owns, the one process that writes it. A store is checked
// against the invalidations made since its fetch began: a worker may have sent it just before it
// applied one the primary had already swept the tier for. A record that does not decode is dropped
// and logged, never applied: a worker's bug must not reach the disk.
import type { CacheEntry } from '../../cache/entry.js';
import type { Logger } from '../../observe/logger.js';
import { decodeEntry } from '../../store/warm/record-codec.js';
import type { WarmStore } from '../../store/warm/warm-store.js';
import type { WarmWrite } from './thread-messages.js';

export interface SharedWarmWritesOptions {
  /** The warm tier the primary owns. */
  warm: WarmStore;
  /** What the tier may keep of a stored entry (InvalidationEngine.admissible). */
  admissible: (entry: CacheEntry) => CacheEntry | undefined;
  logger: Logger;
}

export class SharedWarmWrites {
  #refused = 0;

  constructor(private readonly options: SharedWarmWritesOptions) {}

  /** Stores not kept because an invalidation made after their fetch began covers them. */
  get refused(): number {
    return this.#refused;
  }

  /** A change a worker sent, already checked against the message table (thread-messages.ts). */
  apply(write: WarmWrite): void {
    const warm = this.options.warm;
    switch (write.op) {
      case 'put':
        this.#put(warm, write.record);
        return;
      case 'delete':
        warm.delete(write.key, write.variantKey);
        return;
      case 'use':
        for (const [key, variantKey] of write.variants) warm.markUsed(key, variantKey);
        return;
      case 'verify':
        // The store's own read deletes every record of the key that fails its check.
        warm.peek(write.key);
    }
  }

  #put(warm: WarmStore, record: Uint8Array): void {
    let entry: CacheEntry;
    try {
      entry = decodeEntry(Buffer.from(record.buffer, record.byteOffset, record.byteLength));
    } catch {
      this.options.logger.error('a data-plane worker sent a warm record that does not decode: dropped');
      return;
    }
    const admitted = this.options.admissible(entry);
    if (admitted === undefined) this.#refused += 1;
    else warm.put(admitted);
  }
}
