// Time as the cluster library sees it. Protocol code never reads the real clock or arms real timers:
// it is handed a Clock, so the same code runs on wall time in production and on virtual time in the
// simulator (sim/), where a run is replayed exactly from its seed.

/** An armed timer; pass it back to `Clock.clearTimer` to disarm it. */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Milliseconds since an arbitrary epoch; never goes backwards. */
  now(): number;
  /** Calls `callback` once, `delayMs` from now (0 and negative mean "as soon as possible"). */
  setTimer(delayMs: number, callback: () => void): TimerHandle;
  /** Disarms a timer; harmless if it already fired or was cleared. */
  clearTimer(handle: TimerHandle): void;
}
