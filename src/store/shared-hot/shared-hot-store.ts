// The hot tier as one store for the whole node: every thread that serves the data plane opens the
// same shared memory (hot-memory.ts) and sees the same entries, so a response stored by one thread is
// a hit in every other, held once (DESIGN principle 14).
//
// Records are appended at the head of a circular log and reclaimed at its tail, FIFO with
// reinsertion (CLOCK): a record read since it was written gets a second pass, moved to the head,
// and one that was not is evicted. The index is an open-addressing table with linear probing and
// backward-shift deletion, so it never fills with tombstones.
//
// Readers take no lock. Every change a reader could observe happens inside a window in which the
// index version (a word in shared memory) is odd; a reader copies what it found out of the log and
// keeps it only if the version was even and unchanged around its whole read, else it reads again.
// So a reader never serves bytes that an eviction overwrote while it copied them. Writers take one
// lock (src/shared-memory/shared-lock.ts); the copy of a new record's bytes happens outside the odd window, into space
// no slot points to yet.
import type { CacheEntry } from '../../cache/entry.js';
import { MAX_VARIANTS, type CacheStore, type PutOutcome, type StoreInspection, type StoredSummary, type SweptStore } from '../cache-store.js';
import { StoreError } from '../errors.js';
import {
  CAPACITY,
  EVICTIONS,
  HEAD,
  hotViews,
  LIVE_BYTES,
  LOCK,
  LIVE_ENTRIES,
  LOGICAL_HEAD,
  logView,
  NEXT_RECORD_ID,
  RING,
  ringBytes,
  SLOT_EMPTY,
  SLOT_HASH,
  SLOT_LIVE,
  SLOT_OFFSET,
  SLOT_STATE,
  SLOT_UNITS,
  SLOT_WORDS,
  slotLimit,
  TAIL,
  UNIT_BYTES,
  VARY_CAP_HITS,
  VERSION,
  WRAP,
  type HotMemory,
  type HotViews,
} from './hot-memory.js';
import {
  alignedBytes,
  encodedParts,
  encodeRecord,
  HEADER_BYTES,
  holdsKey,
  KEY_HASH,
  LOGICAL,
  RECORD,
  RECORD_BYTES,
  recordBytes,
  RecordEntry,
  recordKind,
  SLOT_OF,
  summaryAt,
  variantKeyAt,
} from './hot-record.js';
import { keyHash } from '../../shared-memory/key-hash.js';
import { giveBack, takeBuffer } from './record-buffers.js';
import { acquire, holder, release, takeOver } from '../../shared-memory/shared-lock.js';

export interface SharedHotStoreOptions {
  /** The node's hot-tier memory (createHotMemory), shared with the node's other threads. */
  memory: HotMemory;
  /** Called with each entry evicted to make room (not for explicit deletes), after the lock is released. */
  onEvict?: ((entry: CacheEntry) => void) | undefined;
}

/**
 * A reader that finds a change under way spins this many times, then sleeps a millisecond at a time
 * up to READ_SLEEPS times, before it answers as a miss: changes take microseconds, unless the OS
 * stopped the writer in the middle of one.
 */
const READ_SPINS = 1024;
const READ_SLEEPS = 20;
/** Records given a second pass per store at most, so that one store never moves the whole log. */
const REINSERTIONS_PER_STORE = 32;
/** A slot's record is not live (written but not yet published, or abandoned). */
const NO_SLOT = 0xffffffff;

const align = alignedBytes;

/** A place in the log: its offset, and its logical position (bytes written before it). */
interface Position {
  offset: number;
  logical: number;
}

/** The hot tier's one implementation; hot-store.ts checks that it is a HotStore where it makes one. */
export class SharedHotStore implements CacheStore, SweptStore, StoreInspection {
  readonly #v: HotViews;
  readonly #onEvict: ((entry: CacheEntry) => void) | undefined;
  /** The key being looked up, as UTF-8 bytes: compared with records in place, before any copy. */
  #keyBytes = Buffer.allocUnsafe(1024);

  constructor(options: SharedHotStoreOptions) {
    this.#v = hotViews(options.memory);
    this.#onEvict = options.onEvict;
  }

  /** The memory this store works on, to hand to the node's other threads. */
  get memory(): HotMemory {
    return this.#v.memory;
  }

  get entryCount(): number {
    return this.#v.floats[LIVE_ENTRIES]!;
  }

  get byteCount(): number {
    return this.#v.floats[LIVE_BYTES]!;
  }

  get evictionCount(): number {
    return this.#v.floats[EVICTIONS]!;
  }

  get varyCapHits(): number {
    return this.#v.floats[VARY_CAP_HITS]!;
  }

  variants(key: string): CacheEntry[] {
    return this.#read(key, true);
  }

  peek(key: string): CacheEntry[] {
    return this.#read(key, false);
  }

  put(entry: CacheEntry): PutOutcome {
    const parts = encodedParts(entry);
    const size = align(parts.bytes);
    const v = this.#v;
    if (size > v.floats[CAPACITY]!) return 'too_large';
    const hash = keyHash(entry.key);
    const keyLength = this.#encodeKey(entry.key);
    const evicted: CacheEntry[] = [];
    acquire(v.ints, LOCK);
    let outcome: PutOutcome;
    try {
      outcome = this.#store(entry, parts, size, hash, keyLength, evicted);
    } finally {
      release(v.ints, LOCK);
    }
    this.#handOver(evicted);
    return outcome;
  }

  delete(key: string, variantKey?: string): number {
    const v = this.#v;
    const hash = keyHash(key);
    const keyLength = this.#encodeKey(key);
    acquire(v.ints, LOCK);
    try {
      this.#begin();
      let removed = 0;
      for (;;) {
        const slot = this.#findSlot(hash, keyLength, variantKey);
        if (slot < 0) break;
        this.#removeSlot(slot);
        removed += 1;
      }
      this.#end();
      return removed;
    } finally {
      release(v.ints, LOCK);
    }
  }

  resize(maxBytes: number): void {
    const capacity = align(checkedMaxBytes(maxBytes));
    const v = this.#v;
    const evicted: CacheEntry[] = [];
    const ring = ringBytes(capacity);
    const log = v.memory.log;
    if (ring > log.maxByteLength) {
      throw new StoreError('invalid_option', `the hot tier can grow to ${log.maxByteLength} bytes without a restart, not ${ring}`);
    }
    acquire(v.ints, LOCK);
    try {
      if (ring > log.byteLength) log.grow(ring);
      // Records may lie past a smaller end: everything goes, oldest first, and the log starts over.
      if (ring < v.floats[RING]!) while (!this.#empty()) this.#reclaimTail(evicted, false);
      this.#begin();
      v.floats[CAPACITY] = capacity;
      v.floats[RING] = ring;
      this.#end();
    } finally {
      release(v.ints, LOCK);
    }
    this.#handOver(evicted);
  }

  *entries(): Generator<CacheEntry> {
    for (const found of this.#walk((log, offset) => copyOf(log, offset, align(recordBytes(log, offset))).buffer)) yield new RecordEntry(found);
  }

  summaries(): Iterable<StoredSummary> {
    return this.#walk((log, offset) => summaryAt(log, offset));
  }

  /**
   * Makes the tier whole again after thread `deadThreadId` died holding the write lock: the index is
   * rebuilt from the slots whose records check out, and the lock is freed. For the main thread, which
   * sees its workers exit; false (nothing done) when that thread did not hold the lock.
   */
  repairAfter(deadThreadId: number): boolean {
    const v = this.#v;
    if (!takeOver(v.ints, LOCK, deadThreadId)) return false;
    try {
      // The version may have been left odd mid-change; it is odd again for the rebuild.
      if ((Atomics.load(v.ints, VERSION) & 1) === 0) this.#begin();
      this.#rebuildIndex();
      Atomics.add(v.ints, VERSION, 1);
    } finally {
      release(v.ints, LOCK);
    }
    return true;
  }

  /** The threadId of the thread holding the write lock, or undefined. */
  get lockHolder(): number | undefined {
    return holder(this.#v.ints, LOCK);
  }

  // ---- reading, without the lock ----

  #read(key: string, markUsed: boolean): CacheEntry[] {
    const v = this.#v;
    const hash = keyHash(key);
    const keyLength = this.#encodeKey(key);
    const { slots, slotMask, ints } = v;
    for (;;) {
      const version = this.#evenVersion();
      if (version === undefined) return [];
      const log = logView(v);
      let found: { buffer: Buffer; pooled: boolean }[] | undefined;
      let foundSlots: number[] | undefined;
      for (let slot = hash & slotMask; slots[slot * SLOT_WORDS + SLOT_STATE] !== SLOT_EMPTY; slot = (slot + 1) & slotMask) {
        const base = slot * SLOT_WORDS;
        if (slots[base + SLOT_HASH] !== hash) continue;
        const offset = (slots[base + SLOT_OFFSET]! >>> 0) * UNIT_BYTES;
        const units = slots[base + SLOT_UNITS]! >>> 0;
        if (offset + units * UNIT_BYTES > log.length || offset + HEADER_BYTES + keyLength > log.length) continue;
        if (!holdsKey(log, offset, this.#keyBytes, keyLength)) continue;
        (found ??= []).push(copyOf(log, offset, units * UNIT_BYTES));
        (foundSlots ??= []).push(slot);
      }
      if (Atomics.load(ints, VERSION) !== version) {
        for (const copy of found ?? []) if (copy.pooled) giveBack(copy.buffer);
        continue;
      }
      if (found === undefined) return [];
      if (markUsed) for (const slot of foundSlots!) v.refs[slot] = 1;
      const entries = found.map((copy) => new RecordEntry(copy.buffer, key, copy.pooled));
      // Most recently stored first: ids grow with every store, and a record moved keeps its id.
      if (entries.length > 1) entries.sort((a, b) => b.id - a.id);
      return entries;
    }
    return [];
  }

  /**
   * Walks the log from tail to head, reading each live record with `read`, each read checked as a
   * lookup is. A record moved to the head while the walk runs may be read twice, never skipped.
   */
  *#walk<T>(read: (log: Buffer, offset: number) => T): Generator<T> {
    const v = this.#v;
    let at: Position | undefined;
    let end = Infinity;
    for (;;) {
      const version = this.#evenVersion();
      if (version === undefined) continue;
      const position = this.#walkPosition(at);
      if (end === Infinity) end = v.floats[LOGICAL_HEAD]! + v.floats[RING]!;
      const step = position === undefined || position.logical >= end ? undefined : this.#stepAt(position, read);
      if (Atomics.load(v.ints, VERSION) !== version) continue;
      if (step === undefined) return;
      if (step.value !== undefined) yield step.value;
      at = step.next;
    }
  }

  /** Where a walk goes on: `at`, unless the tail passed it (what it passed went, or moved ahead). */
  #walkPosition(at: Position | undefined): Position | undefined {
    const v = this.#v;
    if (this.#empty()) return undefined;
    const tail: Position = { offset: v.floats[TAIL]!, logical: v.floats[LOGICAL_HEAD]! - this.#usedBytes() };
    if (at === undefined || at.logical < tail.logical) return tail;
    return at.logical >= v.floats[LOGICAL_HEAD]! ? undefined : at;
  }

  /** Reads the record at `position` (if live) and says where the next one starts. */
  #stepAt<T>(position: Position, read: (log: Buffer, offset: number) => T): { value: T | undefined; next: Position } {
    const v = this.#v;
    const log = logView(v);
    // The head wrapped here: the log goes on at 0. Padding is not counted in logical positions.
    if (v.floats[WRAP]! >= 0 && position.offset >= v.floats[WRAP]!) return { value: undefined, next: { offset: 0, logical: position.logical } };
    const size = align(recordBytes(log, position.offset));
    const value = this.#liveSlot(log, position.offset) >= 0 ? read(log, position.offset) : undefined;
    return { value, next: { offset: position.offset + size, logical: position.logical + size } };
  }

  /** The index version once it is even (no change under way), or undefined after waiting too long. */
  #evenVersion(): number | undefined {
    const ints = this.#v.ints;
    for (let spin = 0; spin < READ_SPINS; spin += 1) {
      const version = Atomics.load(ints, VERSION);
      if ((version & 1) === 0) return version;
    }
    for (let sleep = 0; sleep < READ_SLEEPS; sleep += 1) {
      const version = Atomics.load(ints, VERSION);
      if ((version & 1) === 0) return version;
      Atomics.wait(ints, VERSION, version, 1);
    }
    return undefined;
  }

  // ---- writing, under the lock ----

  #store(entry: CacheEntry, parts: ReturnType<typeof encodedParts>, size: number, hash: number, keyLength: number, evicted: CacheEntry[]): PutOutcome {
    const v = this.#v;
    const same = this.#findSlot(hash, keyLength, entry.variantKey);
    if (same < 0 && this.#countVariants(hash, keyLength) >= MAX_VARIANTS) {
      v.floats[VARY_CAP_HITS]! += 1;
      return 'vary_cap';
    }
    this.#makeRoom(size, evicted);
    this.#begin();
    const offset = this.#allocate(size);
    this.#end();
    // The record's bytes go in outside the odd window: no slot points here yet, so no reader looks.
    const log = logView(v);
    const id = v.floats[NEXT_RECORD_ID]!;
    v.floats[NEXT_RECORD_ID] = id + 1;
    encodeRecord(log, offset, entry, parts, NO_SLOT, v.floats[LOGICAL_HEAD]! - size, id, hash);
    this.#begin();
    // Making room may have evicted the variant being replaced, or another variant of the key.
    const replaced = this.#findSlot(hash, keyLength, entry.variantKey);
    let slot = replaced;
    if (slot >= 0) {
      v.floats[LIVE_BYTES]! -= (v.slots[slot * SLOT_WORDS + SLOT_UNITS]! >>> 0) * UNIT_BYTES;
    } else {
      slot = hash & v.slotMask;
      while (v.slots[slot * SLOT_WORDS + SLOT_STATE] !== SLOT_EMPTY) slot = (slot + 1) & v.slotMask;
      v.floats[LIVE_ENTRIES]! += 1;
    }
    log.writeUInt32LE(slot, offset + SLOT_OF);
    const base = slot * SLOT_WORDS;
    v.slots[base + SLOT_HASH] = hash;
    v.slots[base + SLOT_OFFSET] = offset / UNIT_BYTES;
    v.slots[base + SLOT_UNITS] = size / UNIT_BYTES;
    v.slots[base + SLOT_STATE] = SLOT_LIVE;
    v.refs[slot] = 0;
    v.floats[LIVE_BYTES]! += size;
    this.#end();
    return 'stored';
  }

  /**
   * Reclaims at the tail until a record of `size` keeps live bytes within the bound, `size`
   * contiguous bytes are free at the head, and a slot is free.
   */
  #makeRoom(size: number, evicted: CacheEntry[]): void {
    const v = this.#v;
    const f = v.floats;
    let secondPasses = 0;
    while (f[LIVE_BYTES]! + size > f[CAPACITY]! || !this.#fits(size) || f[LIVE_ENTRIES]! >= slotLimit(v)) {
      if (this.#empty()) {
        this.#begin();
        v.floats[HEAD] = 0;
        v.floats[TAIL] = 0;
        this.#end();
        continue;
      }
      if (this.#reclaimTail(evicted, secondPasses < REINSERTIONS_PER_STORE)) secondPasses += 1;
    }
  }

  /** Whether `size` contiguous bytes are free at the head (wrapping to 0 if need be). */
  #fits(size: number): boolean {
    const f = this.#v.floats;
    const head = f[HEAD]!;
    const tail = f[TAIL]!;
    if (f[WRAP]! >= 0) return tail - head >= size;
    return f[RING]! - head >= size || tail >= size;
  }

  /** Whether the log holds no record, live or dead. */
  #empty(): boolean {
    const f = this.#v.floats;
    return f[WRAP]! < 0 && f[HEAD] === f[TAIL];
  }

  /** Bytes of records between the tail and the head (the padding where the head wrapped excluded). */
  #usedBytes(): number {
    const f = this.#v.floats;
    if (f[WRAP]! < 0) return f[HEAD]! - f[TAIL]!;
    return f[WRAP]! - f[TAIL]! + f[HEAD]!;
  }

  /**
   * Takes the record at the tail out of the way: a dead one is skipped, a live one read since it was
   * written is moved to the head (when `secondPass` and there is room), any other live one is evicted.
   * Returns whether it moved a record. Each change is a window of its own; copies happen outside them.
   */
  #reclaimTail(evicted: CacheEntry[], secondPass: boolean): boolean {
    const v = this.#v;
    const f = v.floats;
    const log = logView(v);
    const tail = f[TAIL]!;
    if (f[WRAP]! >= 0 && tail >= f[WRAP]!) {
      this.#begin();
      f[TAIL] = 0;
      f[WRAP] = -1;
      this.#end();
      return false;
    }
    const size = align(recordBytes(log, tail));
    if (size < HEADER_BYTES || tail + size > log.length) {
      this.#selfHeal();
      return false;
    }
    const slot = this.#liveSlot(log, tail);
    const move = slot >= 0 && secondPass && v.refs[slot] === 1 && this.#fits(size);
    if (move) {
      this.#begin();
      const to = this.#allocate(size);
      this.#end();
      log.copy(log, to, tail, tail + size);
      log.writeDoubleLE(f[LOGICAL_HEAD]! - size, to + LOGICAL);
    } else if (slot >= 0 && this.#onEvict !== undefined) {
      evicted.push(new RecordEntry(copyOf(log, tail, size).buffer));
    }
    this.#begin();
    if (move) {
      v.slots[slot * SLOT_WORDS + SLOT_OFFSET] = (f[HEAD]! - size) / UNIT_BYTES;
      v.refs[slot] = 0;
    } else if (slot >= 0) {
      this.#removeSlot(slot);
      f[EVICTIONS]! += 1;
    }
    f[TAIL] = tail + size;
    if (f[WRAP]! < 0 && f[TAIL] === f[HEAD]) {
      f[HEAD] = 0;
      f[TAIL] = 0;
    }
    this.#end();
    return move;
  }

  /**
   * The log is not as writers leave it (a record length that cannot be): every entry is dropped and
   * the log starts over, as a corrupt warm record is deleted rather than served. Counted as evictions.
   */
  #selfHeal(): void {
    const v = this.#v;
    this.#begin();
    v.floats[EVICTIONS]! += v.floats[LIVE_ENTRIES]!;
    v.slots.fill(0);
    v.refs.fill(0);
    v.floats[LIVE_ENTRIES] = 0;
    v.floats[LIVE_BYTES] = 0;
    v.floats[HEAD] = 0;
    v.floats[TAIL] = 0;
    v.floats[WRAP] = -1;
    this.#end();
  }

  /** Takes `size` bytes at the head, wrapping to 0 when they do not fit before the end; #fits held. Odd window. */
  #allocate(size: number): number {
    const v = this.#v;
    const f = v.floats;
    let head = f[HEAD]!;
    if (f[WRAP]! < 0 && f[RING]! - head < size) {
      f[WRAP] = head;
      head = 0;
    }
    // The kind and length go in first: a walker reaching this space can always step over it.
    const log = logView(v);
    log.writeUInt32LE(RECORD, head);
    log.writeUInt32LE(NO_SLOT, head + SLOT_OF);
    log.writeUInt32LE(size, head + RECORD_BYTES);
    f[HEAD] = head + size;
    f[LOGICAL_HEAD]! += size;
    return head;
  }

  /** The slot that points at the record at `offset`, or -1 if the record is not live. */
  #liveSlot(log: Buffer, offset: number): number {
    if (recordKind(log, offset) !== RECORD) return -1;
    const slot = log.readUInt32LE(offset + SLOT_OF);
    if (slot > this.#v.slotMask) return -1;
    const base = slot * SLOT_WORDS;
    const slots = this.#v.slots;
    return slots[base + SLOT_STATE] === SLOT_LIVE && (slots[base + SLOT_OFFSET]! >>> 0) * UNIT_BYTES === offset ? slot : -1;
  }

  /** The live slot of `(key, variantKey)`, or of any variant of the key when `variantKey` is undefined. */
  #findSlot(hash: number, keyLength: number, variantKey: string | undefined): number {
    const v = this.#v;
    const log = logView(v);
    for (let slot = hash & v.slotMask; v.slots[slot * SLOT_WORDS + SLOT_STATE] !== SLOT_EMPTY; slot = (slot + 1) & v.slotMask) {
      const base = slot * SLOT_WORDS;
      if (v.slots[base + SLOT_HASH] !== hash) continue;
      const offset = (v.slots[base + SLOT_OFFSET]! >>> 0) * UNIT_BYTES;
      if (!holdsKey(log, offset, this.#keyBytes, keyLength)) continue;
      if (variantKey === undefined || variantKeyAt(log, offset) === variantKey) return slot;
    }
    return -1;
  }

  #countVariants(hash: number, keyLength: number): number {
    const v = this.#v;
    const log = logView(v);
    let count = 0;
    for (let slot = hash & v.slotMask; v.slots[slot * SLOT_WORDS + SLOT_STATE] !== SLOT_EMPTY; slot = (slot + 1) & v.slotMask) {
      const base = slot * SLOT_WORDS;
      if (v.slots[base + SLOT_HASH] === hash && holdsKey(log, (v.slots[base + SLOT_OFFSET]! >>> 0) * UNIT_BYTES, this.#keyBytes, keyLength)) count += 1;
    }
    return count;
  }

  /** Empties `slot` and shifts the rest of its probe run back over it (no tombstones). Odd window. */
  #removeSlot(slot: number): void {
    const v = this.#v;
    const { slots, refs, slotMask } = v;
    const log = logView(v);
    v.floats[LIVE_ENTRIES]! -= 1;
    v.floats[LIVE_BYTES]! -= (slots[slot * SLOT_WORDS + SLOT_UNITS]! >>> 0) * UNIT_BYTES;
    let hole = slot;
    for (let next = (hole + 1) & slotMask; slots[next * SLOT_WORDS + SLOT_STATE] !== SLOT_EMPTY; next = (next + 1) & slotMask) {
      const home = slots[next * SLOT_WORDS + SLOT_HASH]! & slotMask;
      // `next` stays when its home lies cyclically in (hole, next]: moving it before its home would hide it.
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      slots.copyWithin(hole * SLOT_WORDS, next * SLOT_WORDS, next * SLOT_WORDS + SLOT_WORDS);
      refs[hole] = refs[next]!;
      log.writeUInt32LE(hole, (slots[hole * SLOT_WORDS + SLOT_OFFSET]! >>> 0) * UNIT_BYTES + SLOT_OF);
      hole = next;
    }
    slots.fill(0, hole * SLOT_WORDS, hole * SLOT_WORDS + SLOT_WORDS);
    refs[hole] = 0;
  }

  /** Rebuilds the index from the slots whose records check out (after a writer died). Odd window. */
  #rebuildIndex(): void {
    const v = this.#v;
    const { slots, slotMask } = v;
    const log = logView(v);
    const ring = v.floats[RING]!;
    const kept = new Map<number, { hash: number; units: number }>();
    for (let slot = 0; slot <= slotMask; slot += 1) {
      const base = slot * SLOT_WORDS;
      if (slots[base + SLOT_STATE] !== SLOT_LIVE) continue;
      const offset = (slots[base + SLOT_OFFSET]! >>> 0) * UNIT_BYTES;
      const units = slots[base + SLOT_UNITS]! >>> 0;
      const sound =
        offset + units * UNIT_BYTES <= ring &&
        recordKind(log, offset) === RECORD &&
        align(recordBytes(log, offset)) === units * UNIT_BYTES &&
        log.readInt32LE(offset + KEY_HASH) === slots[base + SLOT_HASH];
      if (sound) kept.set(offset, { hash: slots[base + SLOT_HASH]!, units });
    }
    slots.fill(0);
    v.refs.fill(0);
    let bytes = 0;
    for (const [offset, { hash, units }] of kept) {
      let slot = hash & slotMask;
      while (slots[slot * SLOT_WORDS + SLOT_STATE] !== SLOT_EMPTY) slot = (slot + 1) & slotMask;
      const base = slot * SLOT_WORDS;
      slots[base + SLOT_HASH] = hash;
      slots[base + SLOT_OFFSET] = offset / UNIT_BYTES;
      slots[base + SLOT_UNITS] = units;
      slots[base + SLOT_STATE] = SLOT_LIVE;
      log.writeUInt32LE(slot, offset + SLOT_OF);
      bytes += units * UNIT_BYTES;
    }
    v.floats[LIVE_ENTRIES] = kept.size;
    v.floats[LIVE_BYTES] = bytes;
  }

  #begin(): void {
    Atomics.add(this.#v.ints, VERSION, 1);
  }

  #end(): void {
    Atomics.add(this.#v.ints, VERSION, 1);
  }

  #encodeKey(key: string): number {
    const bytes = Buffer.byteLength(key);
    if (bytes > this.#keyBytes.length) this.#keyBytes = Buffer.allocUnsafe(bytes * 2);
    return this.#keyBytes.write(key, 0, bytes, 'utf8');
  }

  #handOver(evicted: readonly CacheEntry[]): void {
    for (const entry of evicted) this.#onEvict?.(entry);
  }
}

/** A private copy of `bytes` of the log from `offset`; `pooled` when its memory goes back to record-buffers.ts. */
function copyOf(log: Buffer, offset: number, bytes: number): { buffer: Buffer; pooled: boolean } {
  const copy = takeBuffer(bytes);
  log.copy(copy.buffer, 0, offset, offset + bytes);
  return copy;
}

function checkedMaxBytes(maxBytes: number): number {
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new StoreError('invalid_option', `hot store maxBytes must be a positive integer, got ${maxBytes}`);
  }
  return maxBytes;
}
