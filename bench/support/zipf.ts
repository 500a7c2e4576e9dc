// A Zipf-distributed stream of key ranks, the request pattern of a CDN's catalogue: rank r is drawn
// with probability ∝ 1 / (r + 1)^s. Shared by the hit-ratio benchmarks and the test that replays a
// stream through a real node.

/** `count` ranks in 0..keys-1, drawn by inverse CDF with `next` (uniform in [0, 1)). */
export function zipfStream(count: number, keys: number, s: number, next: () => number): Uint32Array {
  const cdf = new Float64Array(keys);
  let total = 0;
  for (let r = 0; r < keys; r++) cdf[r] = total += 1 / (r + 1) ** s;
  const stream = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const u = next() * total;
    let low = 0;
    let high = keys - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (cdf[mid]! < u) low = mid + 1;
      else high = mid;
    }
    stream[i] = low;
  }
  return stream;
}
