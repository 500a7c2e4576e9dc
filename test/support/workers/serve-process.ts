// What the tests of `svc serve` with data-plane workers share: the CLI they start, how many
// connections a burst opens, what an answer of their numbering origin says, and the workers of a
// primary, read from /proc.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILLs a `svc serve` primary and waits until its data-plane workers have exited too: they see
 * their primary gone and stop, holding the data-plane port until they do (a supervisor that stops the
 * whole process group waits the same way). Nothing is left if it was not running.
 */
export async function killWithWorkers(primary: ChildProcess): Promise<void> {
  if (primary.exitCode !== null || primary.signalCode !== null) return;
  const workers = await workerPids(primary.pid!);
  const exited = once(primary, 'exit');
  primary.kill('SIGKILL');
  await exited;
  for (let i = 0; workers.some(alive); i++) {
    if (i === 400) throw new Error(`the workers of the killed svc did not exit: ${workers.filter(alive).join(' ')}`);
    await sleep(25);
  }
}
