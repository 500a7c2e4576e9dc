// The real Clock: monotonic time from performance.now() and timers on setTimeout. Timers are unref'd,
// so a forgotten probe timer never keeps a process alive; whoever owns the process decides when it ends.
// This file and seeded-random.ts are the only places in cluster/ that may touch the real clock.
import { performance } from 'node:perf_hooks';
import type { Clock, TimerHandle } from './clock.js';

class SystemTimer implements TimerHandle {
  constructor(
    readonly id: number,
    readonly timeout: NodeJS.Timeout,
  ) {}
}

let nextTimerId = 1;

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(delayMs: number, callback: () => void): TimerHandle {
    const timeout = setTimeout(callback, Math.max(0, delayMs));
    timeout.unref();
    return new SystemTimer(nextTimerId++, timeout);
  },
  clearTimer(handle: TimerHandle): void {
    if (handle instanceof SystemTimer) clearTimeout(handle.timeout);
  },
};
