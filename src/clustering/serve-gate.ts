// Whether a clustered node may answer from its cache, as two numbers in shared memory that every
// data-plane thread reads on each lookup (ClusterNode writes them):
// - the lease (strong mode, cluster/lease.ts): until when the node is in touch with a majority of its
//   view. Past it, nothing is served from the cache: the node may have missed an invalidation that the
//   others made without it. Kept in the process's monotonic time as epoch milliseconds
//   (performance.timeOrigin + performance.now(), the same in every thread to within a millisecond),
//   which runs on while the process is stopped, so a node that was paused holds no lease when it wakes.
// - the catch-up gate: entries requested before this time (the node's clock, as entries record it)
//   are held back until the node has caught up with the invalidations it may have missed (a restart, a
//   lost lease, an accusation of death). Open (the lowest time) once caught up.
import { performance } from 'node:perf_hooks';
import type { CacheEntry } from '../cache/entry.js';

const LEASE = 0;
const GATE = 1;
const NEVER = BigInt(Number.MIN_SAFE_INTEGER);
const ALWAYS = BigInt(Number.MAX_SAFE_INTEGER);

/** Monotonic time as epoch milliseconds, comparable between the threads of a process. */
function monotonicEpochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** A time of the real cluster clock (systemClock: performance.now()) as monotonic epoch milliseconds. */
export function epochOfMonotonic(ms: number): number {
  return performance.timeOrigin + ms;
}

export class ServeGate {
  readonly #words: BigInt64Array;

  /** `leaseNow`: the time lease times are compared with; the process's monotonic epoch time but in the simulator. */
  private constructor(
    readonly buffer: SharedArrayBuffer,
    private readonly leaseNow: () => number = monotonicEpochMs,
  ) {
    this.#words = new BigInt64Array(buffer);
  }

  /** A gate that holds back entries requested before `startedMs` and needs no lease until told. */
  static create(startedMs: number, leaseNow?: () => number): ServeGate {
    const gate = new ServeGate(new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT), leaseNow);
    gate.leaseUntil(Number.POSITIVE_INFINITY);
    gate.holdBackBefore(startedMs);
    return gate;
  }

  /** The gate another thread created. */
  static over(buffer: SharedArrayBuffer): ServeGate {
    return new ServeGate(buffer);
  }

  /** Whether `entry` may be answered from the cache now. */
  readonly servable = (entry: Pick<CacheEntry, 'requestTimeMs'>): boolean =>
    this.leaseNow() < Number(Atomics.load(this.#words, LEASE)) && entry.requestTimeMs >= Number(Atomics.load(this.#words, GATE));

  /** The lease runs to `epochMs` (monotonic, monotonicEpochMs); infinite when none is needed. */
  leaseUntil(epochMs: number): void {
    Atomics.store(this.#words, LEASE, toWord(epochMs));
  }

  /** Holds back entries requested before `nodeMs` until `open`. */
  holdBackBefore(nodeMs: number): void {
    Atomics.store(this.#words, GATE, toWord(nodeMs));
  }

  /** Caught up: every entry may be served again (as the lease allows). */
  open(): void {
    Atomics.store(this.#words, GATE, NEVER);
  }
}

function toWord(ms: number): bigint {
  if (ms >= Number.MAX_SAFE_INTEGER) return ALWAYS;
  if (ms <= Number.MIN_SAFE_INTEGER) return NEVER;
  return BigInt(Math.floor(ms));
}
