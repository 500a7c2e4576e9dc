// The median of a benchmark's per-round figures and how far it can be trusted. On a shared machine
// the rounds of one run swing by tens of percent, so a median printed alone reads as more exact
// than it is; a bootstrap interval says what another run of the same length might have printed.

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** mulberry32: a small seeded generator, so the same rounds always print the same interval. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The percentile bootstrap interval of the median: the rounds are resampled with replacement
 * `resamples` times, and the interval holds the middle `confidence` share of the resampled medians.
 * With few rounds it is wide, as it should be.
 */
export function medianInterval(values: readonly number[], confidence = 0.9, resamples = 4000): { low: number; high: number } {
  if (values.length === 0) throw new Error('interval of no values');
  const random = seededRandom(0x5eed);
  const medians: number[] = [];
  const sample = new Array<number>(values.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(random() * values.length)]!;
    medians.push(median(sample));
  }
  medians.sort((a, b) => a - b);
  const tail = (1 - confidence) / 2;
  return { low: medians[Math.floor(tail * (resamples - 1))]!, high: medians[Math.ceil((1 - tail) * (resamples - 1))]! };
}
