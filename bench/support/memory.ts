// The memory of a server process, from /proc (Linux): its resident set now and at its peak, and a
// sampler that keeps the largest resident set it saw while a benchmark runs.
import { readFileSync } from 'node:fs';

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((candidate) => candidate.startsWith(`${field}:`));
  // The kernel reports kB.
  return line === undefined ? 0 : Number(line.split(/\s+/)[1]) * 1024;
}

/** Resident set size now, in bytes. */
export function rssBytes(pid: number): number {
  return statusField(pid, 'VmRSS');
}

/** The largest resident set size the process ever had (the kernel's high-water mark), in bytes. */
export function peakRssBytes(pid: number): number {
  return statusField(pid, 'VmHWM');
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Samples the resident set of some processes every `intervalMs` and keeps each one's largest. */
export class RssSampler {
  readonly #largest = new Map<number, number>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly pids: readonly number[],
    intervalMs = 50,
  ) {
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.sample();
  }

  sample(): void {
    for (const pid of this.pids) {
      try {
        this.#largest.set(pid, Math.max(this.#largest.get(pid) ?? 0, rssBytes(pid)));
      } catch {
        // The process exited; its last sample stands.
      }
    }
  }

  /** Stops sampling; the largest resident set seen per pid. */
  stop(): Map<number, number> {
    clearInterval(this.#timer);
    this.sample();
    return this.#largest;
  }
}

/** The anonymous memory of a process (heaps, malloc, shared memory it wrote; not file-backed pages), in bytes. */
export function anonymousBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    .split('\n')
    .find((candidate) => candidate.startsWith('Anonymous:'));
  // The kernel reports kB.
  return line === undefined ? 0 : Number(line.split(/\s+/)[1]) * 1024;
}
