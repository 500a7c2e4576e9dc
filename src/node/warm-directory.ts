// The warm directory as the node takes it: locked first (one node per directory), then opened as
// the warm tier. A failure names `warm.path` and its cause, as a configuration problem does.
import type { Config } from '../config/index.js';
import { ConfigError } from '../config/index.js';
import { StoreError } from '../store/errors.js';
import { lockDirectory, WarmDirectoryLockedError } from '../store/warm/directory-lock.js';
import { openWarmStore, type WarmStore } from '../store/warm/warm-store.js';
import type { Teardown } from './teardown.js';
import { fsReason } from './startup-checks.js';

/** Locks and opens the warm tier; the teardown releases the lock after the store is flushed and closed. */
export async function openLockedWarmStore(
  warm: NonNullable<Config['warm']>,
  now: () => number,
  teardown: Teardown,
  /** The cluster mode the tier is filled under (spec §1.4): a tier filled under another is emptied. */
  cacheMode: string | undefined,
): Promise<WarmStore> {
  let lock;
  try {
    lock = await lockDirectory(warm.path);
  } catch (error) {
    const reason = error instanceof WarmDirectoryLockedError ? error.message : `cannot lock ${JSON.stringify(warm.path)}: ${fsReason(error)}`;
    throw new ConfigError([{ path: 'warm.path', message: reason }]);
  }
  teardown.add(() => lock.release());
  let store: WarmStore;
  try {
    store = await openWarmStore({ path: warm.path, maxBytes: warm.max_bytes, writeQueueLength: warm.write_queue_length, now, cacheMode });
  } catch (error) {
    if (error instanceof StoreError) throw new ConfigError([{ path: 'warm.path', message: error.message }]);
    throw error;
  }
  teardown.add(async () => {
    await store.flush();
    await store.close();
  });
  return store;
}
