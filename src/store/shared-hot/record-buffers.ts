// Memory for the copies readers make of large records, reused: a hit copies its record out of the
// shared log (hot-record.ts says why), and allocating a fresh 100 KiB buffer for each hit measured
// twice the CPU of the whole hit (43 against 95 µs for a 100 KiB body, in a bare server: the cost is
// the allocation and the collector, not the copy). Buffers come in power-of-two sizes from 16 KiB; a
// response gives its buffer back once it is sent (RecordEntry.releaseWhenSent). Records below 16 KiB
// are copied into Node's own small-buffer pool, which costs nothing of the kind.
const SMALLEST_CLASS = 14; // 16 KiB
const LARGEST_CLASS = 24; // 16 MiB
/** Kept for reuse per thread at most, across every size. */
const POOLED_BYTES = 64 * 1024 * 1024;

const free: Buffer[][] = Array.from({ length: LARGEST_CLASS + 1 }, () => []);
let pooledBytes = 0;

function classOf(bytes: number): number {
  return Math.max(SMALLEST_CLASS, Math.ceil(Math.log2(bytes)));
}

/** A buffer of exactly `bytes`, from the pool when the size is pooled; `pooled` says whether it may be given back. */
export function takeBuffer(bytes: number): { buffer: Buffer; pooled: boolean } {
  if (bytes < 1 << SMALLEST_CLASS) return { buffer: Buffer.allocUnsafe(bytes), pooled: false };
  const size = classOf(bytes);
  if (size > LARGEST_CLASS) return { buffer: Buffer.allocUnsafeSlow(bytes), pooled: false };
  const whole = free[size]!.pop();
  if (whole !== undefined) pooledBytes -= whole.length;
  return { buffer: (whole ?? Buffer.allocUnsafeSlow(1 << size)).subarray(0, bytes), pooled: true };
}

/** Gives back a buffer takeBuffer lent (`pooled`); nothing may read or write it afterwards. */
export function giveBack(buffer: Buffer): void {
  // A pooled buffer is the start of an ArrayBuffer of its size class.
  const whole = Buffer.from(buffer.buffer as ArrayBuffer);
  if (pooledBytes + whole.length > POOLED_BYTES) return;
  free[classOf(whole.length)]!.push(whole);
  pooledBytes += whole.length;
}
