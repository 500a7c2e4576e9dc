// The cluster mode a warm directory was filled under (spec §1.4: "Cache contents are not preserved
// across a mode change, so all nodes start empty"). A strong-mode node holds the keys it owns and
// relies on peers for the rest; an eventual-mode node holds what its own clients asked for; the two
// are invalidated and routed differently. A directory written under the other mode starts empty.
import { clearEntries, type WarmTables } from './tables.js';

/** The meta table's key naming the cluster mode the directory was filled under. */
export const CACHE_MODE_KEY = 'cache_mode';

/**
 * Records `mode` in the directory, wiping its records first when it names another one. A node outside
 * any cluster (`mode` undefined) leaves the record as it is. Returns the mode discarded, if any.
 */
export async function reconcileCacheMode(tables: WarmTables, mode: string | undefined): Promise<string | undefined> {
  if (mode === undefined) return undefined;
  const found = tables.meta.get(CACHE_MODE_KEY);
  if (found === mode) return undefined;
  let discarded: string | undefined;
  if (typeof found === 'string') {
    discarded = found;
    // Records first, the mode last: a crash in between leaves the old mode named and wipes again.
    await clearEntries(tables);
  }
  await tables.meta.put(CACHE_MODE_KEY, mode);
  return discarded;
}
