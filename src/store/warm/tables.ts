// The lmdb environment behind a warm directory and its four tables:
// - `records`: record id → entry record (metadata and raw body, see record-codec.ts);
// - `index`: record id → index record (key, variant, size, last access, fetch time, tags);
// - `recency`: (last access, record id) → size, in order of last access: what eviction reads;
// - `meta`: the directory's schema version, cluster mode and totals (entries and bytes held).
// All four live in one environment so one transaction updates a record, its index record, its place
// in the recency order and the totals together: after a crash they agree, with nothing to rebuild.

import { closeSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { StoreError } from '../errors.js';

export interface WarmTables {
  env: RootDatabase;
  records: Database<Buffer, Buffer>;
  index: Database<Buffer, Buffer>;
  recency: Database<Buffer, Buffer>;
  meta: Database<unknown, string>;
}

/** What the store holds, as the meta table keeps it: updated in the transaction of every write. */
export interface WarmTotals {
  entries: number;
  bytes: number;
}

/** The meta table's key of the totals. */
const TOTALS_KEY = 'totals';

/** The totals as the current transaction sees them (none written yet: an empty directory). */
export function readTotals(tables: WarmTables): WarmTotals {
  const found = tables.meta.get(TOTALS_KEY) as unknown;
  if (Array.isArray(found) && found.length === 2 && Number.isSafeInteger(found[0]) && Number.isSafeInteger(found[1])) {
    return { entries: found[0] as number, bytes: found[1] as number };
  }
  return { entries: 0, bytes: 0 };
}

/** Writes the totals; inside a transaction, with the records they count. */
export function writeTotals(tables: WarmTables, totals: WarmTotals): void {
  void tables.meta.put(TOTALS_KEY, [totals.entries, totals.bytes]);
}

/** Empties a directory of its entries (a schema or cluster mode change): records, index, order, totals. */
export async function clearEntries(tables: WarmTables): Promise<void> {
  await tables.records.clearAsync();
  await tables.index.clearAsync();
  await tables.recency.clearAsync();
  await tables.meta.remove(TOTALS_KEY);
}

/** LMDB's meta page magic (0xBEEFC0DE, little-endian) sits at this offset of data.mdb. */
const LMDB_MAGIC = 0xbeefc0de;
const LMDB_MAGIC_OFFSET = 24;

/**
 * Refuses a data.mdb that is not an lmdb file: the native library trusts its file and would crash
 * the process on one. (Damage inside a valid lmdb file's pages is beyond this check; the checksums
 * on records cover the values.)
 */
function assertLmdbFile(directory: string): void {
  const file = join(directory, 'data.mdb');
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new StoreError('open_failed', `cannot read ${file}`, { cause: error });
  }
  try {
    const head = Buffer.alloc(LMDB_MAGIC_OFFSET + 4);
    const read = readSync(fd, head, 0, head.length, 0);
    // An empty file is what a process killed while creating the environment leaves: lmdb sets it up.
    if (read === 0) return;
    if (read < head.length || head.readUInt32LE(LMDB_MAGIC_OFFSET) !== LMDB_MAGIC) {
      throw new StoreError('open_failed', `${file} is not an lmdb file; remove the directory or point warm.path elsewhere`);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens (creating if needed) the environment at `path`, a directory. `readOnly` opens one another
 * process writes (a data-plane worker beside its primary): nothing is created, and lmdb refuses writes.
 */
export function openWarmTables(path: string, { readOnly = false }: { readOnly?: boolean } = {}): WarmTables {
  try {
    if (!readOnly) mkdirSync(path, { recursive: true });
  } catch (error) {
    throw new StoreError('open_failed', `cannot create the warm store directory ${path}: ${(error as Error).message}`, { cause: error });
  }
  assertLmdbFile(path);
  try {
    const env = open({ path, maxDbs: 4, readOnly });
    return {
      env,
      records: env.openDB<Buffer, Buffer>({ name: 'records', encoding: 'binary', keyEncoding: 'binary' }),
      index: env.openDB<Buffer, Buffer>({ name: 'index', encoding: 'binary', keyEncoding: 'binary' }),
      recency: env.openDB<Buffer, Buffer>({ name: 'recency', encoding: 'binary', keyEncoding: 'binary' }),
      meta: env.openDB<unknown, string>({ name: 'meta', encoding: 'json' }),
    };
  } catch (error) {
    throw new StoreError('open_failed', `cannot open the warm store at ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
