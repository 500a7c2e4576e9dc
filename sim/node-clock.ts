// One simulated node's view of the shared virtual clock. Its timers belong to the node instance, so
// a paused node's timers wait until it resumes (as under a GC pause or SIGSTOP) and a crashed node's
// timers never fire. Time itself keeps running for a paused node, as wall time does.

import type { Clock, TimerHandle } from '../cluster/clock.js';
import type { EventOwner, SimClock } from './sim-clock.js';

export class NodeClock implements Clock {
  constructor(
    private readonly clock: SimClock,
    private readonly owner: EventOwner,
  ) {}

  now(): number {
    return this.clock.now();
  }

  setTimer(delayMs: number, callback: () => void): TimerHandle {
    return this.clock.scheduleTimer(delayMs, callback, this.owner);
  }

  clearTimer(handle: TimerHandle): void {
    this.clock.clearTimer(handle);
  }
}
