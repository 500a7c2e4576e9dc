// Whether the node is out of service (draining or drained), as one word of shared memory that every
// data-plane thread reads on each request: while it is up, responses stop offering keep-alive. The
// main thread writes it (drain, undrain); a thread started later (after one died) reads the state in
// force, where a copy handed to it at start could be stale by the time it serves.

const DRAINING = 1;
const SERVING = 0;

export class DrainFlag {
  readonly #word: Int32Array;

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.#word = new Int32Array(buffer);
  }

  /** A flag that is down: the node serves. */
  static create(): DrainFlag {
    return new DrainFlag(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  }

  /** The flag another thread created. */
  static over(buffer: SharedArrayBuffer): DrainFlag {
    return new DrainFlag(buffer);
  }

  /** Read on every request, so it reads one word. */
  readonly isDraining = (): boolean => Atomics.load(this.#word, 0) === DRAINING;

  set(draining: boolean): void {
    Atomics.store(this.#word, 0, draining ? DRAINING : SERVING);
  }
}
