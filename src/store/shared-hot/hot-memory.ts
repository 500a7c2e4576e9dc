// The memory of the hot tier, shared by every thread of a node (DESIGN principle 14: one node is one
// cache): a log of records, an index of slots that point into it, and a few control words. It is
// made of SharedArrayBuffers, so the threads that serve the data plane read the same bytes; nothing
// of an entry lives in any thread's heap. The main thread creates it and hands it to each worker.
//
// Layout, all little-endian:
// - control: Int32 words (the write lock and the index version, which Atomics operate on) and
//   Float64 words (positions, counts) that only the lock holder writes;
// - slots: four Int32 words per slot (key hash, record offset in 8-byte units, record size in 8-byte
//   units, state), an open-addressing table with linear probing;
// - refs: one byte per slot, the CLOCK reference bit, set by readers without the lock;
// - log: records, each at an 8-byte aligned offset (hot-record.ts), written at the head and reclaimed
//   at the tail (shared-hot-store.ts).

import { threadId } from 'node:worker_threads';

/** Int32 control words. */
export const LOCK = 0;
export const VERSION = 1;
const INT_WORDS = 4;

/** Float64 control words (indices into the Float64 view, after the Int32 words). */
export const HEAD = 0;
export const TAIL = 1;
/** Where the head last wrapped to 0, in bytes; -1 when the log has not wrapped since the tail did. */
export const WRAP = 2;
/** The bound on the bytes of live records (`hot_max_bytes`). */
export const CAPACITY = 3;
export const LIVE_ENTRIES = 4;
export const LIVE_BYTES = 5;
/** The logical position of the head: bytes ever written, so that walkers can tell before from after. */
export const LOGICAL_HEAD = 6;
export const NEXT_RECORD_ID = 7;
export const EVICTIONS = 8;
export const VARY_CAP_HITS = 9;
/** Where the log wraps: CAPACITY plus the room second passes need (ringBytes). */
export const RING = 10;
const FLOAT_WORDS = 11;

export const SLOT_WORDS = 4;
export const SLOT_HASH = 0;
export const SLOT_OFFSET = 1;
export const SLOT_UNITS = 2;
export const SLOT_STATE = 3;
export const SLOT_EMPTY = 0;
export const SLOT_LIVE = 1;

/** Records are placed at multiples of this, so that their Float64 fields are aligned. */
export const UNIT_BYTES = 8;

/**
 * Slots per byte of capacity: one per 512 bytes, and at most half of them in use (the index evicts
 * past that), so an entry of about 256 bytes or more fits by its bytes before it runs out of slots.
 * The index costs 16 bytes (plus one reference byte) per 512 bytes of capacity: about 3%.
 */
const BYTES_PER_SLOT = 512;
const MIN_SLOTS = 1024;
/** The log can grow to this many times its first length by a reload without a restart. */
export const GROWTH_FACTOR = 4;

/**
 * The bytes of log for a bound of `capacity`: the bound, plus a sixteenth of it (at least 64 KiB) so
 * that a record read since it was written can be moved to the head for its second pass (CLOCK)
 * even when live records fill the bound. Records larger than that room only ever get one pass.
 */
export function ringBytes(capacity: number): number {
  return capacity + Math.max(64 * 1024, Math.ceil(capacity / 16 / UNIT_BYTES) * UNIT_BYTES);
}

export interface HotMemory {
  readonly control: SharedArrayBuffer;
  readonly slots: SharedArrayBuffer;
  readonly refs: SharedArrayBuffer;
  readonly log: SharedArrayBuffer;
}

/** The views a thread works through; made once per thread from the shared buffers. */
export interface HotViews {
  readonly memory: HotMemory;
  readonly ints: Int32Array;
  readonly floats: Float64Array;
  readonly slots: Int32Array;
  readonly refs: Uint8Array;
  /** Slot count - 1 (the count is a power of two). */
  readonly slotMask: number;
  /** The log as a Buffer; renewed when the log grew (see logView). */
  log: Buffer;
}

function slotCountFor(maxBytes: number): number {
  let count = MIN_SLOTS;
  while (count * BYTES_PER_SLOT < maxBytes * 2) count *= 2;
  return count;
}

/**
 * Memories made by this thread so far. Record ids begin at a multiple of 2^32 that differs per memory
 * (and per thread that makes them), so that ids stay unique among the memories a process holds
 * (RecordEntry's memo of decoded fields is keyed by id).
 */
let memoriesMade = 0;

/** Memory for a tier of `maxBytes`; the index is sized for GROWTH_FACTOR times that. */
export function createHotMemory(maxBytes: number): HotMemory {
  const capacity = Math.ceil(maxBytes / UNIT_BYTES) * UNIT_BYTES;
  const ring = ringBytes(capacity);
  const slots = slotCountFor(capacity);
  const memory: HotMemory = {
    control: new SharedArrayBuffer(INT_WORDS * 4 + FLOAT_WORDS * 8),
    slots: new SharedArrayBuffer(slots * SLOT_WORDS * 4),
    refs: new SharedArrayBuffer(slots),
    log: new SharedArrayBuffer(ring, { maxByteLength: ring * GROWTH_FACTOR }),
  };
  const floats = new Float64Array(memory.control, INT_WORDS * 4, FLOAT_WORDS);
  floats[WRAP] = -1;
  floats[CAPACITY] = capacity;
  floats[RING] = ring;
  memoriesMade += 1;
  floats[NEXT_RECORD_ID] = (((threadId % 2048) * 1024 + (memoriesMade % 1024)) * 2 ** 32) + 1;
  return memory;
}

export function hotViews(memory: HotMemory): HotViews {
  const slots = new Int32Array(memory.slots);
  return {
    memory,
    ints: new Int32Array(memory.control, 0, INT_WORDS),
    floats: new Float64Array(memory.control, INT_WORDS * 4, FLOAT_WORDS),
    slots,
    refs: new Uint8Array(memory.refs),
    slotMask: slots.length / SLOT_WORDS - 1,
    log: Buffer.from(memory.log, 0, memory.log.byteLength),
  };
}

/** The log view, renewed if another thread grew the log since this thread's view was made. */
export function logView(views: HotViews): Buffer {
  if (views.log.length !== views.memory.log.byteLength) views.log = Buffer.from(views.memory.log, 0, views.memory.log.byteLength);
  return views.log;
}

/** Entries the index holds at most before it evicts to make room: half its slots. */
export function slotLimit(views: HotViews): number {
  return (views.slotMask + 1) / 2;
}
