// One running suspicion of one member, after hashicorp/memberlist suspicion.go. Lifeguard (Dadgar et al.
// 2017, section IV.B) starts the timeout at its maximum and shortens it logarithmically each time another
// member independently suspects the same member, down to the minimum once `expected` have confirmed.
import type { Clock, TimerHandle } from '../clock.js';
import { remainingSuspicionTimeMs } from '../math/suspicion-timeout.js';

export class Suspicion {
  private readonly confirmers = new Set<string>();
  private readonly startedAtMs: number;
  private timer: TimerHandle;

  constructor(
    private readonly clock: Clock,
    accuser: string,
    private readonly expected: number,
    private readonly minTimeoutMs: number,
    private readonly maxTimeoutMs: number,
    private readonly onTimeout: () => void,
  ) {
    this.startedAtMs = clock.now();
    // The accuser who started the suspicion is not an independent confirmation of it.
    this.confirmers.add(accuser);
    const timeoutMs = expected < 1 ? minTimeoutMs : maxTimeoutMs;
    this.timer = clock.setTimer(timeoutMs, onTimeout);
  }

  /** Confirmations counted so far. */
  get confirmations(): number {
    return this.confirmers.size - 1;
  }

  /** Counts `from` as a confirmation; returns true if it was new (and so worth re-gossiping). */
  confirm(from: string): boolean {
    if (this.confirmations >= this.expected || this.confirmers.has(from)) return false;
    this.confirmers.add(from);
    const elapsedMs = this.clock.now() - this.startedAtMs;
    const remainingMs = remainingSuspicionTimeMs(
      this.confirmations,
      this.expected,
      elapsedMs,
      this.minTimeoutMs,
      this.maxTimeoutMs,
    );
    this.clock.clearTimer(this.timer);
    this.timer = this.clock.setTimer(Math.max(0, remainingMs), this.onTimeout);
    return true;
  }

  cancel(): void {
    this.clock.clearTimer(this.timer);
  }
}
