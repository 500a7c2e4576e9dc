// What the tests of `svc serve` as an operator runs it share: the CLI they start, a configuration on
// the defaults, a warm-tier write made durable, and a SIGKILL that waits for the process (and so its
// threads and its ports) to be gone.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../bench/support/free-port.js';
import { fetchRaw } from '../http.js';
import { eventually } from '../eventually.js';

export const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
/**
 * How long a `svc serve` on the defaults is given to be ready: its threads, its warm tier's lock and
 * index. Beside a second `npm test` a start took up to 22 s.
 */
export const SERVE_READY_WAIT_MS = 30_000;

/** Where a test's `svc serve` keeps its files and listens. */
export interface ServeSetup {
  /** A directory of its own, with the configuration file and the warm tier in it: the test removes it. */
  dir: string;
  configFile: string;
  dataUrl: string;
  adminUrl: string;
  adminPort: number;
}

/** Writes a configuration on the defaults with a warm tier, one pool to `originUrl` and free ports. */
export async function serveSetup(options: { originUrl: string; token: string; warmMaxBytes: number }): Promise<ServeSetup> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-serve-'));
  const [dataPort, adminPort] = [await freePort(), await freePort()];
  const configFile = join(dir, 'svc.yaml');
  await writeFile(
    configFile,
    [
      `listen: 127.0.0.1:${dataPort}`,
      `admin: { listen: "127.0.0.1:${adminPort}", token: ${options.token} }`,
      `warm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: ${options.warmMaxBytes} }`,
      `pools: [{ name: origin, upstreams: ["${options.originUrl}"] }]`,
      'routes: [{ name: all, pool: origin }]',
      '',
    ].join('\n'),
  );
  return { dir, configFile, dataUrl: `http://127.0.0.1:${dataPort}`, adminUrl: `http://127.0.0.1:${adminPort}`, adminPort };
}

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
