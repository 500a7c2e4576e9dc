// Loads servers in turn with wrk (Debian's `wrk`, as the anchors script uses), round after round,
// and prints medians and per-round ratios against the first target. A server's CPU is the CPU of its
// process and every process below it (primary and workers), read from /proc.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Started } from './processes.js';
import { median } from './median-interval.js';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export interface WrkTarget {
  name: string;
  url: string;
  server: Started;
}

export interface WrkRun {
  requestsPerSecond: number;
  cpuUsPerRequest: number;
}

export interface WrkSettings {
  rounds: number;
  seconds: number;
  connections: number;
}

/** Exits with a message when wrk is missing. */
export function requireWrk(): void {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
    console.error('wrk is not installed (apt-get install -y wrk)');
    process.exit(1);
  }
}

/** CPU time in ms of `pid` and every process below it. */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  const visit = (id: number): void => {
    try {
      const stat = readFileSync(`/proc/${id}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
      for (const task of readdirSync(`/proc/${id}/task`)) {
        const children = readFileSync(`/proc/${id}/task/${task}/children`, 'utf8').trim();
        for (const child of children === '' ? [] : children.split(' ')) visit(Number(child));
      }
    } catch {
      // exited meanwhile
    }
  };
  visit(pid);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

function wrk(url: string, seconds: number, connections: number): { requestsPerSecond: number; requests: number } {
  const out = execFileSync('wrk', ['-t2', `-c${connections}`, `-d${seconds}s`, url], { encoding: 'utf8' });
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const total = /(\d+) requests in/.exec(out);
  if (!rate || !total) throw new Error(`unexpected wrk output:\n${out}`);
  return { requestsPerSecond: Number(rate[1]), requests: Number(total[1]) };
}

/** Warms every target for 2 s, then loads each in turn `rounds` times (the order rotating); prints the table. */
export function runWrkRounds(targets: readonly WrkTarget[], settings: WrkSettings, title: string): Map<WrkTarget, WrkRun[]> {
  const runs = new Map<WrkTarget, WrkRun[]>(targets.map((target) => [target, []]));
  const ratios = new Map<WrkTarget, number[]>(targets.map((target) => [target, []]));
  for (const target of targets) wrk(target.url, 2, settings.connections);
  for (let round = 0; round < settings.rounds; round++) {
    for (let turn = 0; turn < targets.length; turn++) {
      const target = targets[(round + turn) % targets.length]!;
      const pid = target.server.child.pid!;
      const cpuBefore = treeCpuMs(pid);
      const load = wrk(target.url, settings.seconds, settings.connections);
      const cpuMs = treeCpuMs(pid) - cpuBefore;
      runs.get(target)!.push({ requestsPerSecond: load.requestsPerSecond, cpuUsPerRequest: (cpuMs * 1000) / Math.max(1, load.requests) });
    }
    const base = runs.get(targets[0]!)!.at(-1)!.requestsPerSecond;
    for (const target of targets) ratios.get(target)!.push(runs.get(target)!.at(-1)!.requestsPerSecond / base);
  }
  console.log(`\n${title}: wrk -t2 -c${settings.connections}, ${settings.rounds} rounds of ${settings.seconds} s per target, medians`);
  console.log(`${'target'.padEnd(44)}   req/s   server CPU µs/req   / ${targets[0]!.name} (per round)`);
  for (const target of targets) {
    const perRound = ratios.get(target)!;
    const of = (figure: (run: WrkRun) => number): number => median(runs.get(target)!.map(figure));
    console.log(
      `${target.name.padEnd(44)} ${of((run) => run.requestsPerSecond).toFixed(0).padStart(7)}   ${of((run) => run.cpuUsPerRequest).toFixed(1).padStart(17)}   ${median(perRound).toFixed(3)}x (${perRound.map((ratio) => ratio.toFixed(2)).join(' ')})`,
    );
  }
  return runs;
}
