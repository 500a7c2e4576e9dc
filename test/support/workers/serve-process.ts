// What the tests of `svc serve` as an operator runs it share: the CLI they start, a warm-tier write
// made durable, and a SIGKILL that waits for the process (and so its threads and its ports) to be gone.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { fetchRaw } from '../http.js';
import { eventually } from '../eventually.js';

export const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

/**
 * Waits until a node's warm tier has made a write durable at or after `sinceMs`
 * (svc_wal_last_sync_timestamp_seconds): what a thread stored since then is on disk.
 */
export async function untilWarmSynced(adminUrl: string, sinceMs: number): Promise<void> {
  await eventually(
    `a warm-tier write durable after ${new Date(sinceMs).toISOString()}`,
    async () => Number(/^svc_wal_last_sync_timestamp_seconds (\S+)$/m.exec((await fetchRaw(`${adminUrl}/metrics`)).body)?.[1] ?? 0),
    (seconds) => seconds * 1000 >= sinceMs,
    { timeoutMs: 15_000, everyMs: 50 },
  );
}

/** SIGKILLs a `svc serve` and resolves once it is gone (its threads with it, its ports free). */
export async function killProcess(svc: ChildProcess): Promise<void> {
  if (svc.exitCode !== null || svc.signalCode !== null) return;
  const exited = once(svc, 'exit');
  svc.kill('SIGKILL');
  await exited;
}
