// A clock and a timer function the test moves by hand: advancing fires, in order, every timer that
// falls due on the way, with the clock set to each one's due time when it fires.
import type { SetTimer } from '../../../src/runtime/timers.js';

interface PendingTimer {
  atMs: number;
  order: number;
  callback: () => void;
  done: boolean;
}

export class ManualTime {
  #nowMs: number;
  #order = 0;
  #timers: PendingTimer[] = [];

  /** Starts on a whole second, so HTTP dates (whole seconds) carry this clock exactly. */
  constructor(startMs: number = Math.ceil(Date.now() / 1000) * 1000) {
    this.#nowMs = startMs;
  }

  readonly now = (): number => this.#nowMs;

  readonly setTimer: SetTimer = (callback, delayMs) => {
    const timer: PendingTimer = { atMs: this.#nowMs + Math.max(0, delayMs), order: this.#order++, callback, done: false };
    this.#timers.push(timer);
    return () => {
      timer.done = true;
    };
  };

  /** Timers armed and neither fired nor cancelled. */
  get pendingTimers(): number {
    return this.#timers.filter((timer) => !timer.done).length;
  }

  /** The HTTP date of now. */
  httpDate(): string {
    return new Date(this.#nowMs).toUTCString();
  }

  /** Moves the clock without firing timers: a process that was suspended, or a wall clock stepped. */
  jump(ms: number): void {
    this.#nowMs += ms;
  }

  advance(ms: number): void {
    const targetMs = this.#nowMs + ms;
    for (;;) {
      const due = this.#timers
        .filter((timer) => !timer.done && timer.atMs <= targetMs)
        .sort((a, b) => a.atMs - b.atMs || a.order - b.order)[0];
      if (due === undefined) break;
      due.done = true;
      this.#nowMs = Math.max(this.#nowMs, due.atMs);
      due.callback();
    }
    this.#timers = this.#timers.filter((timer) => !timer.done);
    this.#nowMs = targetMs;
  }
}
