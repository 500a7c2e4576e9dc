// Small statistics over simulated measurements, kept pure so reports are deterministic.

/**
 * The nearest-rank percentile (`p` in [0, 100]) of `values`: the smallest value with at least p% of
 * the values at or below it. null for an empty list.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

/** Rounds to `digits` decimals, turning -0 into 0 so serialised reports do not differ by sign. */
export function roundTo(value: number, digits: number): number {
  const factor = 10 ** digits;
  const rounded = Math.round(value * factor) / factor;
  return rounded === 0 ? 0 : rounded;
}
