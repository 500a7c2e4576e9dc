// When each recently purged key was purged. A fetch that began before a purge can finish after it;
// the lazy check hides what such a fetch stores by comparing its requestTimeMs with the key's purge
// time. Records are kept for a window longer than any fetch may last, and bounded in number.

export interface PurgeRecord {
  readonly key: string;
  /** ms since the epoch; entries of the key with requestTimeMs <= atMs are hidden. */
  readonly atMs: number;
}

export class PurgeRecords {
  /** Insertion order is purge order: a key purged again moves to the end. */
  readonly #atMs = new Map<string, number>();

  get size(): number {
    return this.#atMs.size;
  }

  /** Whether a purge of the entry's key came at or after its fetch began. */
  hides(key: string, requestTimeMs: number): boolean {
    const atMs = this.#atMs.get(key);
    return atMs !== undefined && requestTimeMs <= atMs;
  }

  record(key: string, atMs: number): void {
    this.#atMs.delete(key);
    this.#atMs.set(key, atMs);
  }

  /** Removes and returns the records made at or before `cutoffMs`, and the oldest beyond `maxRecords`. */
  takeExpired(cutoffMs: number, maxRecords: number): PurgeRecord[] {
    const taken: PurgeRecord[] = [];
    let excess = this.#atMs.size - maxRecords;
    for (const [key, atMs] of this.#atMs) {
      if (atMs > cutoffMs && excess <= 0) break;
      taken.push({ key, atMs });
      excess -= 1;
    }
    for (const { key } of taken) this.#atMs.delete(key);
    return taken;
  }

  records(): PurgeRecord[] {
    return [...this.#atMs].map(([key, atMs]) => ({ key, atMs }));
  }
}
