// What the tests of `svc serve` with data-plane workers share: the CLI they start, how many
// connections a burst opens, what an answer of their numbering origin says, and the workers of a
// primary, read from /proc.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { fetchRaw } from '../http.js';

export const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
/** Connections opened at once: enough that an idle kernel wakes both workers. */
export const BURST = 8;
/** Bursts tried before a test gives up on reaching both workers. */
export const MAX_BURSTS = 60;

/** One answer: its X-Cache, and which origin fetch its body came from (`fetch N`). */
export interface Served {
  cache: string;
  fetch: number;
}

/** The child processes of `pid` (a primary's: its workers); none once it is gone. */
export async function workerPids(pid: number): Promise<number[]> {
  const listed = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return listed.trim().split(/\s+/).filter(Boolean).map(Number);
}

/**
 * Waits until a node's warm tier has made a write durable at or after `sinceMs`
 * (svc_wal_last_sync_timestamp_seconds): what a worker stored since then is on disk, where the other
 * workers read it.
 */
export async function untilWarmSynced(adminUrl: string, sinceMs: number): Promise<void> {
  for (let i = 0; ; i++) {
    const metrics = (await fetchRaw(`${adminUrl}/metrics`)).body;
    const seconds = Number(/^svc_wal_last_sync_timestamp_seconds (\S+)$/m.exec(metrics)?.[1] ?? 0);
    if (seconds * 1000 >= sinceMs) return;
    if (i === 300) throw new Error(`no warm-tier write became durable after ${new Date(sinceMs).toISOString()}`);
    await sleep(50);
  }
}
