// RE2 patterns matched many at a time: items are kept in blocks, each compiled into one RE2.Set, so
// asking which of N patterns match a subject costs about N / MAX_BLOCK_PATTERNS DFA passes instead
// of N regex calls. Blocks grow like a binary counter (a new item is a block of one; two neighbours
// of equal size merge), so an item is recompiled O(log MAX_BLOCK_PATTERNS) times in its life and
// at most that many blocks are not full. Blocks are bounded in patterns and in pattern bytes so that
// compiling one holds the event loop a few milliseconds; patterns RE2 finds costly to compile stop
// merging earlier (MERGE_BUDGET_MS), and a pattern RE2 refuses in a set is matched on its own.
import RE2 from 're2';

type RE2Set = InstanceType<typeof RE2.Set>;

/**
 * Patterns per RE2.Set at most: 512 typical ban patterns compile in about 3 ms (1,024 in 6 to 20 ms
 * on a loaded machine), and RE2 refuses a set whose program outgrows its 8 MiB budget.
 */
export const MAX_BLOCK_PATTERNS = 512;
/** Pattern bytes per RE2.Set at most: 512 patterns of 32 bytes, so long patterns make smaller sets. */
export const MAX_BLOCK_PATTERN_BYTES = 16 * 1024;
/**
 * Two blocks whose compilations took more CPU time than this together are not merged: their
 * patterns are costly for RE2 (large repetitions), and the merged set would hold the event loop too
 * long when compiled. Typical blocks of 256 patterns take about 1.5 ms each.
 */
export const MERGE_BUDGET_MS = 10;
/** A block whose live items fall below this share of its patterns is rebuilt from them. */
const MIN_LIVE_SHARE = 0.25;

/** How a PatternBlocks reads the bounds a block keeps of its items, to skip whole blocks. */
export interface ItemBounds<T> {
  /** The newest creation time behind the item (ms); a block is skipped for subjects newer than all. */
  newestMs(item: T): number;
  /** The latest arrival sequence behind the item; a block is skipped when all are already checked. */
  lastSeq(item: T): number;
}

class Block<T> {
  /** UTF-8 bytes of the patterns. */
  readonly patternBytes: number;
  /** Undefined when RE2 cannot compile these patterns as one set: they are then tried one by one. */
  readonly set: RE2Set | undefined;
  /** Set only when the block is tried one pattern at a time (no set, or the set failed to match). */
  singles: RE2[] | undefined;
  live: number;

  constructor(
    readonly patterns: readonly string[],
    /** Parallel to `patterns`; a removed item leaves a hole until the block is rebuilt. */
    readonly items: (T | undefined)[],
    /** Upper bounds over the items (never lowered by a removal; a rebuild recomputes them). */
    public newestMs: number,
    public lastSeq: number,
    /** What compiling the set took, to judge the cost of a merge. */
    readonly compileMs: number,
    set: RE2Set | undefined,
  ) {
    this.set = set;
    this.live = items.length;
    this.patternBytes = patterns.reduce((sum, pattern) => sum + Buffer.byteLength(pattern, 'utf8'), 0);
  }
}

/**
 * Compiles `patterns` into one set, or undefined when RE2 refuses them together. The cost is the
 * process's CPU time, not the wall clock: on a busy machine the wall clock also counts the time other
 * processes held the CPU, which would stop blocks from merging for no fault of their patterns.
 */
function compileSet(patterns: readonly string[]): { set: RE2Set | undefined; compileMs: number } {
  const started = process.cpuUsage();
  let set: RE2Set | undefined;
  try {
    set = new RE2.Set(patterns, 'u');
  } catch {
    set = undefined;
  }
  const used = process.cpuUsage(started);
  return { set, compileMs: (used.user + used.system) / 1000 };
}

export interface PatternBlocksOptions {
  /** Compile CPU time (ms) two blocks may have taken together and still merge; MERGE_BUDGET_MS by default. */
  readonly mergeBudgetMs?: number;
}

export class PatternBlocks<T> {
  readonly #bounds: ItemBounds<T>;
  readonly #mergeBudgetMs: number;
  /** Oldest first. */
  #blocks: Block<T>[] = [];
  readonly #blockOf = new Map<T, Block<T>>();

  constructor(bounds: ItemBounds<T>, options: PatternBlocksOptions = {}) {
    this.#bounds = bounds;
    this.#mergeBudgetMs = options.mergeBudgetMs ?? MERGE_BUDGET_MS;
  }

  /** Live items. */
  get size(): number {
    return this.#blockOf.size;
  }

  /** Blocks held (for tests and the benchmarks' memory figures). */
  get blockCount(): number {
    return this.#blocks.length;
  }

  /** Adds `item`, found by `pattern` (which RE2 has already accepted on its own). */
  add(pattern: string, item: T): void {
    this.#blocks.push(this.#build([pattern], [item]));
    this.#mergeTail();
  }

  /** Removes `item`; its pattern stops matching at once. */
  delete(item: T): void {
    const block = this.#blockOf.get(item);
    if (block === undefined) return;
    this.#blockOf.delete(item);
    block.items[block.items.indexOf(item)] = undefined;
    block.live -= 1;
    if (block.live === 0) {
      this.#blocks.splice(this.#blocks.indexOf(block), 1);
    } else if (block.live < block.patterns.length * MIN_LIVE_SHARE) {
      this.#blocks[this.#blocks.indexOf(block)] = this.#rebuild(block);
    }
  }

  /** Raises its block's bounds after the item's own bounds grew (a group that gained a ban). */
  grew(item: T): void {
    const block = this.#blockOf.get(item);
    if (block === undefined) return;
    block.newestMs = Math.max(block.newestMs, this.#bounds.newestMs(item));
    block.lastSeq = Math.max(block.lastSeq, this.#bounds.lastSeq(item));
  }

  /**
   * Calls `visit` with each live item whose pattern matches `subject`, newest block first, until it
   * returns true; returns whether one did. Blocks whose items are all older than `sinceMs` or all
   * arrived at or before `checkedSeq` are not searched.
   */
  some(subject: Buffer, sinceMs: number, checkedSeq: number, visit: (item: T) => boolean): boolean {
    for (let b = this.#blocks.length - 1; b >= 0; b -= 1) {
      const block = this.#blocks[b] as Block<T>;
      if (block.newestMs < sinceMs || block.lastSeq <= checkedSeq) continue;
      if (block.singles === undefined && block.set !== undefined) {
        let matched: number[];
        try {
          // Most subjects match nothing: one DFA pass says so before indexes are collected.
          if (!block.set.test(subject)) continue;
          matched = block.set.match(subject);
        } catch {
          // RE2's DFA ran out of memory on this subject: the patterns are tried one by one from now on.
          block.singles = block.patterns.map((pattern) => new RE2(pattern));
          b += 1;
          continue;
        }
        for (const index of matched) {
          const item = block.items[index];
          if (item !== undefined && visit(item)) return true;
        }
        continue;
      }
      block.singles ??= block.patterns.map((pattern) => new RE2(pattern));
      for (let i = 0; i < block.items.length; i += 1) {
        const item = block.items[i];
        if (item !== undefined && (block.singles[i] as RE2).test(subject) && visit(item)) return true;
      }
    }
    return false;
  }

  #build(patterns: readonly string[], items: T[]): Block<T> {
    const { set, compileMs } = compileSet(patterns);
    let newestMs = -Infinity;
    let lastSeq = -Infinity;
    for (const item of items) {
      newestMs = Math.max(newestMs, this.#bounds.newestMs(item));
      lastSeq = Math.max(lastSeq, this.#bounds.lastSeq(item));
    }
    const block = new Block(patterns, items, newestMs, lastSeq, compileMs, set);
    for (const item of items) this.#blockOf.set(item, block);
    return block;
  }

  /** A new block of the live items of `blocks`, in order. */
  #rebuild(...blocks: Block<T>[]): Block<T> {
    const patterns: string[] = [];
    const items: T[] = [];
    for (const block of blocks) {
      block.items.forEach((item, index) => {
        if (item === undefined) return;
        patterns.push(block.patterns[index] as string);
        items.push(item);
      });
    }
    return this.#build(patterns, items);
  }

  /** Merges the newest block into its neighbour while they are the same size and the merge is cheap. */
  #mergeTail(): void {
    while (this.#blocks.length >= 2) {
      const newer = this.#blocks[this.#blocks.length - 1] as Block<T>;
      const older = this.#blocks[this.#blocks.length - 2] as Block<T>;
      const patterns = older.patterns.length + newer.patterns.length;
      if (older.patterns.length > newer.patterns.length || patterns > MAX_BLOCK_PATTERNS) return;
      if (older.patternBytes + newer.patternBytes > MAX_BLOCK_PATTERN_BYTES) return;
      if (older.set === undefined || newer.set === undefined) return;
      if (older.compileMs + newer.compileMs > this.#mergeBudgetMs) return;
      const merged = this.#rebuild(older, newer);
      if (merged.set === undefined) {
        // RE2 refused the two together (its program budget): both stay as they are.
        for (const item of older.items) if (item !== undefined) this.#blockOf.set(item, older);
        for (const item of newer.items) if (item !== undefined) this.#blockOf.set(item, newer);
        return;
      }
      this.#blocks.splice(this.#blocks.length - 2, 2, merged);
    }
  }
}
