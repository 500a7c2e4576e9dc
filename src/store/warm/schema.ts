// What a warm directory must hold before its records may be served: an lmdb environment whose meta
// table names WARM_SCHEMA_VERSION. A directory written under any other version (older or newer) is
// wiped and starts empty: the warm tier is a cache, so refilling it from the origin is always
// correct, while a migration would be code that runs once per upgrade and is rarely tested.

import { clearEntries, type WarmTables } from './tables.js';
import { WARM_SCHEMA_VERSION } from './record-codec.js';

/** The meta table's key naming the directory's schema version. */
export const SCHEMA_VERSION_KEY = 'schema_version';

/** What open found when the directory held records of another schema version. */
export interface DiscardedSchema {
  /** The version the directory named, or null when it named none. */
  foundVersion: number | null;
  /** Entries (index records) it held, all discarded. */
  entryCount: number;
}

/** The line an operator reads when open wiped a directory: what was found, what this build reads. */
export function discardedSchemaMessage(path: string, discarded: DiscardedSchema): string {
  const found = discarded.foundVersion === null ? 'no schema version' : `schema version ${discarded.foundVersion}`;
  return (
    `the warm tier at ${path} was written with ${found}, and this build reads version ${WARM_SCHEMA_VERSION}: ` +
    `its ${discarded.entryCount} entries were discarded, not read, and it starts empty (the origin refills it)`
  );
}

/**
 * Makes the directory's schema version WARM_SCHEMA_VERSION, wiping the records first when it named
 * another one (or none while holding records). Returns what was discarded, if anything.
 */
export async function reconcileSchema(tables: WarmTables): Promise<DiscardedSchema | undefined> {
  const found = tables.meta.get(SCHEMA_VERSION_KEY);
  if (found === WARM_SCHEMA_VERSION) return undefined;
  const empty = tables.records.getCount() === 0 && tables.index.getCount() === 0;
  let discarded: DiscardedSchema | undefined;
  if (!empty || found !== undefined) {
    discarded = { foundVersion: typeof found === 'number' ? found : null, entryCount: tables.index.getCount() };
    // Records first, the version last: a crash in between leaves the old version named, so the next
    // open wipes again rather than serving a half-cleared directory.
    await clearEntries(tables);
  }
  await tables.meta.put(SCHEMA_VERSION_KEY, WARM_SCHEMA_VERSION);
  return discarded;
}
