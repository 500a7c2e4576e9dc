// Starting the servers a benchmark measures, each in its own process so the load generator does not
// share their event loop, and stopping them when done.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'undici';

export interface Started {
  child: ChildProcess;
  stop(): Promise<void>;
}

export function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}

/**
 * CPU time (user + system) a process has used, in ms, from /proc (Linux). Per request it measures how
 * much work a server does whatever else the machine is doing, which throughput alone cannot.
 */
export function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksPerSecond = 100; // USER_HZ on Linux
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** Polls `url` until it answers `expectStatus` (the process is up) or `timeoutMs` passes. */
export async function waitFor(url: string, timeoutMs = 20_000, expectStatus = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await request(url);
      await response.body.dump();
      if (response.statusCode === expectStatus) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Ports for child processes, drawn from below the ephemeral range (the tests use the same). */
export { freePort } from './free-port.js';
