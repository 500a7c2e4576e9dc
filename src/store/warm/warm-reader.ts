// The warm tier as a process that does not own it reads it: a data-plane worker beside its primary,
// which opened the store and is its one writer (docs/decisions.md "Data-plane workers"). lmdb lets
// several processes map one environment; a reader sees what the writer has committed, as of the
// snapshot its read transaction took. The variants of a key are found as the owner finds them, by one
// range read over the ids that begin with the key's hash (record-codec.ts).
// Every record is checked as the owner checks it: a record that fails is reported, never served.

import type { CacheEntry } from '../../cache/entry.js';
import { StoreError } from '../errors.js';
import { decodeEntry, keyPrefix, prefixRange, recordId, WARM_SCHEMA_VERSION } from './record-codec.js';
import { SCHEMA_VERSION_KEY } from './schema.js';
import { openWarmTables, type WarmTables } from './tables.js';

/** What one read of a key found: the entries to serve, and whether a record of the key failed its check. */
export interface KeyRead {
  entries: CacheEntry[];
  /** A record failed its check: the owner, asked to read the key, deletes what it cannot trust. */
  damaged: boolean;
}

const NOTHING: KeyRead = Object.freeze({ entries: [], damaged: false }) as KeyRead;

export class WarmReader {
  readonly #tables: WarmTables;
  #readErrors = 0;
  #closed = false;

  private constructor(tables: WarmTables) {
    this.#tables = tables;
  }

  /**
   * Opens the environment at `path` for reading. The owner must have opened it first: the schema it
   * names must be this build's, or nothing it holds could be read right.
   */
  static open(path: string): WarmReader {
    const tables = openWarmTables(path, { readOnly: true });
    const version = tables.meta.get(SCHEMA_VERSION_KEY);
    if (version !== WARM_SCHEMA_VERSION) {
      void tables.env.close();
      throw new StoreError('open_failed', `the warm store at ${path} names schema version ${String(version)}, not ${WARM_SCHEMA_VERSION}: its owner has not opened it`);
    }
    return new WarmReader(tables);
  }

  /** Reads lmdb failed, each answered as nothing found. */
  get readErrors(): number {
    return this.#readErrors;
  }

  /** Every stored variant of `key`, most recently fetched first. */
  variantsOf(key: string): KeyRead {
    if (this.#closed) return NOTHING;
    let read: KeyRead | undefined;
    try {
      // One cursor pass over the key's ids; each value is lmdb-js's own copy, safe to keep.
      for (const { key: id, value } of this.#tables.records.getRange(prefixRange(keyPrefix(key)))) {
        read ??= { entries: [], damaged: false };
        let entry: CacheEntry;
        try {
          entry = decodeEntry(value);
        } catch {
          // Whatever a decode fails on, the record cannot be trusted (as in the owner's read).
          read.damaged = true;
          continue;
        }
        // Another key whose hash shares the prefix is not this key's; a record at the wrong id is damage.
        if (entry.key !== key) continue;
        if (!recordId(entry.key, entry.variantKey).equals(id)) {
          read.damaged = true;
          continue;
        }
        read.entries.push(entry);
      }
    } catch {
      this.#readErrors += 1;
      return NOTHING;
    }
    if (read === undefined) return NOTHING;
    read.entries.sort((a, b) => b.requestTimeMs - a.requestTimeMs);
    return read;
  }

  /** Whether a record for the variant exists, without reading it. */
  has(key: string, variantKey: string): boolean {
    if (this.#closed) return false;
    try {
      return this.#tables.records.doesExist(recordId(key, variantKey));
    } catch {
      this.#readErrors += 1;
      return false;
    }
  }

  /**
   * Drops the read snapshot: the next read sees everything the owner has committed. lmdb renews it on
   * the next turn of the event loop anyway; an invalidation must not wait for that.
   */
  renewSnapshot(): void {
    if (!this.#closed) this.#tables.env.resetReadTxn();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tables.env.close();
  }
}
