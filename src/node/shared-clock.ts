// A wall clock that a test can move and that every thread of a node reads alike: its state is two
// numbers in shared memory (a frozen instant, or NaN for the real time, and an offset), so a node's
// data-plane worker threads see the test's clock as its main thread does. Production nodes use
// Date.now; only tests hand a node one of these (StartNodeOptions.clock).

const FROZEN_AT = 0;
const OFFSET = 1;

export class SharedClock {
  readonly #state: Float64Array;

  /** A new clock at the real time. */
  static create(): SharedClock {
    const clock = new SharedClock(new SharedArrayBuffer(16));
    clock.#state[FROZEN_AT] = Number.NaN;
    return clock;
  }

  /** The clock whose state is `memory` (made by create() in another thread). */
  constructor(readonly memory: SharedArrayBuffer) {
    this.#state = new Float64Array(memory);
  }

  readonly now = (): number => {
    const frozenAt = this.#state[FROZEN_AT]!;
    return (Number.isNaN(frozenAt) ? Date.now() : frozenAt) + this.#state[OFFSET]!;
  };

  /** Stops the clock where it is: only advance() moves it from now on. */
  freeze(): void {
    this.#state[FROZEN_AT] = Date.now();
  }

  advance(ms: number): void {
    this.#state[OFFSET]! += ms;
  }
}
