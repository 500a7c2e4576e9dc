// Virtual time for the simulator: one binary-heap event queue that every simulated node shares.
// Events fire in (time, insertion sequence) order, so two runs that schedule the same events fire
// them in the same order and a run replays exactly from its seed. This loop runs every timer and
// every packet of a simulation, so it avoids per-event allocations beyond the event itself. The heap
// is 4-ary and keeps each slot's ordering key (time, sequence) in two typed arrays beside the array of
// events: sifting compares contiguous numbers instead of loading event objects scattered over the heap
// (at 1,000 nodes thousands of events are queued, and those loads were cache misses).

import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { Clock, TimerHandle } from '../cluster/clock.js';

/** Whether an event's owner lets its events fire now (`running`), holds them, or drops them. */
export type OwnerStatus = 'running' | 'paused' | 'dead';

/**
 * Something that owns events: a node instance (its timers) or a host (deliveries to its address).
 * A paused owner's due events go to `held` until it resumes; a dead owner's events are dropped.
 */
export interface EventOwner {
  readonly status: OwnerStatus;
  readonly held: SimEvent[];
}

/** A network event handler: receives the event so it can read `arg` without a closure per event. */
export type EventHandler = (event: SimEvent) => void;

/** One scheduled event. Timers use `callback`; network events use `handler` with `arg`. */
export class SimEvent implements TimerHandle {
  constructor(
    readonly id: number,
    public timeMs: number,
    public seq: number,
    public callback: (() => void) | null,
    public handler: EventHandler | null,
    public arg: unknown,
    readonly owner: EventOwner | null,
  ) {}

  /** Whether the event was cleared before it fired. */
  get cancelled(): boolean {
    return this.callback === null && this.handler === null;
  }
}

export class ForeignTimerError extends Error {
  override readonly name = 'ForeignTimerError';
  readonly code = 'sim_foreign_timer';
  constructor() {
    super('clearTimer was given a handle that this simulated clock did not create');
  }
}

export class ClockReentryError extends Error {
  override readonly name = 'ClockReentryError';
  readonly code = 'sim_clock_reentry';
  constructor() {
    super('runUntil was called while the simulated clock was already running');
  }
}

/** What the clock has done so far; the figures a run reports about its own cost. */
export interface SimClockStats {
  /** Events whose callback ran. */
  firedEvents: number;
  /** Events cleared before their time, skipped when they reached the head of the queue. */
  cancelledEvents: number;
  /** Events dropped because their owner was dead (a crashed node's timers and packets). */
  droppedEvents: number;
  /** Events deferred because their owner was paused; they fire again when it resumes. */
  heldEvents: number;
  /** Events waiting in the queue now, cancelled ones included. */
  queuedEvents: number;
}

/**
 * Awaiting between every pair of events costs more than the event itself, so microtasks the
 * simulator did not cause (cluster code awaiting its own promises) get a turn at least once per
 * virtual millisecond: well under any protocol timer (probe timeout 500 ms, gossip interval 200 ms).
 */
const MICROTASK_QUANTUM_MS = 1;

/** Slots the heap's key arrays start with; they double when full. */
const INITIAL_HEAP_SLOTS = 1024;

export class SimClock implements Clock {
  private nowMs = 0;
  private nextSeq = 0;
  private readonly heap: SimEvent[] = [];
  /** Ordering key of heap[i]: its time and, among equal times, its insertion sequence. */
  private heapTimes = new Float64Array(INITIAL_HEAP_SLOTS);
  private heapSeqs = new Float64Array(INITIAL_HEAP_SLOTS);
  private running = false;
  /** Set when an event settled a promise, so the loop lets every continuation run before moving on. */
  private asyncWorkPending = false;
  private firedEvents = 0;
  private cancelledEvents = 0;
  private droppedEvents = 0;
  private heldEvents = 0;

  now(): number {
    return this.nowMs;
  }

  setTimer(delayMs: number, callback: () => void): TimerHandle {
    return this.scheduleTimer(delayMs, callback, null);
  }

  clearTimer(handle: TimerHandle): void {
    if (!(handle instanceof SimEvent)) throw new ForeignTimerError();
    handle.callback = null;
    handle.handler = null;
  }

  /** Arms a timer owned by `owner` (a node instance): it is held while paused and dropped once dead. */
  scheduleTimer(delayMs: number, callback: () => void, owner: EventOwner | null): SimEvent {
    const seq = this.nextSeq++;
    const event = new SimEvent(seq, this.nowMs + (delayMs > 0 ? delayMs : 0), seq, callback, null, null, owner);
    this.push(event);
    return event;
  }

  /** Schedules a network event; `handler(event)` runs at its time and reads `event.arg`. */
  scheduleEvent(delayMs: number, handler: EventHandler, arg: unknown, owner: EventOwner | null): SimEvent {
    const seq = this.nextSeq++;
    const event = new SimEvent(seq, this.nowMs + (delayMs > 0 ? delayMs : 0), seq, null, handler, arg, owner);
    this.push(event);
    return event;
  }

  /** Puts events held during a pause back in the queue at the current time, in their held order. */
  release(events: readonly SimEvent[]): void {
    for (const event of events) {
      if (event.cancelled) continue;
      event.timeMs = this.nowMs;
      event.seq = this.nextSeq++;
      this.push(event);
    }
  }

  /**
   * Tells the loop that the current event settled a promise or started async work, so it drains
   * every pending continuation (a macrotask turn) before virtual time moves on.
   */
  noteAsyncWork(): void {
    this.asyncWorkPending = true;
  }

  /**
   * Fires every event due at or before `timeMs`, in order, then leaves the clock at `timeMs`.
   * After an event that settled a promise (see noteAsyncWork) the loop drains every continuation
   * before the next event, so they run at the virtual time of the event that resolved them. Other
   * microtasks run at least once per MICROTASK_QUANTUM_MS of virtual time. Resolves to the number of
   * events fired.
   */
  async runUntil(timeMs: number): Promise<number> {
    if (this.running) throw new ClockReentryError();
    this.running = true;
    const firedBefore = this.firedEvents;
    const heap = this.heap;
    let nextYieldMs = this.nowMs;
    try {
      while (heap.length > 0) {
        const event = heap[0]!;
        if (event.timeMs > timeMs) break;
        this.pop();
        if (event.timeMs > this.nowMs) this.nowMs = event.timeMs;
        const owner = event.owner;
        if (owner !== null && owner.status !== 'running') {
          if (event.cancelled) {
            this.cancelledEvents++;
          } else if (owner.status === 'paused') {
            owner.held.push(event);
            this.heldEvents++;
          } else {
            this.droppedEvents++;
          }
          continue;
        }
        const callback = event.callback;
        if (callback !== null) {
          event.callback = null;
          this.firedEvents++;
          callback();
        } else {
          const handler = event.handler;
          if (handler === null) {
            this.cancelledEvents++;
            continue;
          }
          event.handler = null;
          this.firedEvents++;
          handler(event);
        }
        if (this.asyncWorkPending) {
          this.asyncWorkPending = false;
          await nextMacrotask();
          nextYieldMs = this.nowMs + MICROTASK_QUANTUM_MS;
        } else if (this.nowMs >= nextYieldMs) {
          await null;
          nextYieldMs = this.nowMs + MICROTASK_QUANTUM_MS;
        }
      }
      if (timeMs > this.nowMs) this.nowMs = timeMs;
    } finally {
      this.running = false;
    }
    return this.firedEvents - firedBefore;
  }

  /** Runs the clock `durationMs` past the current time. */
  runFor(durationMs: number): Promise<number> {
    return this.runUntil(this.nowMs + durationMs);
  }

  stats(): SimClockStats {
    return {
      firedEvents: this.firedEvents,
      cancelledEvents: this.cancelledEvents,
      droppedEvents: this.droppedEvents,
      heldEvents: this.heldEvents,
      queuedEvents: this.heap.length,
    };
  }

  private push(event: SimEvent): void {
    const heap = this.heap;
    let index = heap.length;
    if (index === this.heapTimes.length) this.growKeys();
    const times = this.heapTimes;
    const seqs = this.heapSeqs;
    const timeMs = event.timeMs;
    const seq = event.seq;
    heap.push(event);
    while (index > 0) {
      const parentIndex = (index - 1) >> 2;
      const parentTime = times[parentIndex] as number;
      if (parentTime < timeMs || (parentTime === timeMs && (seqs[parentIndex] as number) < seq)) break;
      heap[index] = heap[parentIndex] as SimEvent;
      times[index] = parentTime;
      seqs[index] = seqs[parentIndex] as number;
      index = parentIndex;
    }
    heap[index] = event;
    times[index] = timeMs;
    seqs[index] = seq;
  }

  /** Removes the head of the heap (the caller has read it). */
  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    const length = heap.length;
    if (length === 0) return;
    const times = this.heapTimes;
    const seqs = this.heapSeqs;
    const lastTime = times[length] as number;
    const lastSeq = seqs[length] as number;
    let index = 0;
    for (;;) {
      const first = 4 * index + 1;
      if (first >= length) break;
      const end = first + 4 < length ? first + 4 : length;
      let child = first;
      let childTime = times[first] as number;
      let childSeq = seqs[first] as number;
      for (let candidate = first + 1; candidate < end; candidate++) {
        const time = times[candidate] as number;
        if (time < childTime || (time === childTime && (seqs[candidate] as number) < childSeq)) {
          child = candidate;
          childTime = time;
          childSeq = seqs[candidate] as number;
        }
      }
      if (lastTime < childTime || (lastTime === childTime && lastSeq < childSeq)) break;
      heap[index] = heap[child] as SimEvent;
      times[index] = childTime;
      seqs[index] = childSeq;
      index = child;
    }
    heap[index] = last;
    times[index] = lastTime;
    seqs[index] = lastSeq;
  }

  private growKeys(): void {
    const times = new Float64Array(this.heapTimes.length * 2);
    times.set(this.heapTimes);
    this.heapTimes = times;
    const seqs = new Float64Array(this.heapSeqs.length * 2);
    seqs.set(this.heapSeqs);
    this.heapSeqs = seqs;
  }
}
