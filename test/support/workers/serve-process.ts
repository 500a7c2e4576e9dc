// What the tests of `svc serve` with data-plane workers share: the CLI they start, how many
// connections a burst opens, what an answer of their numbering origin says, and the workers of a
// primary, read from /proc.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

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
