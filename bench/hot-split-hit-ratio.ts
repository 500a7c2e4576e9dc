// Issue 22: what splitting the hot tier between data-plane workers costs in hit ratio. Replays one
// Zipf-distributed request stream (s = 1.0 by default, 1M requests over 100k keys) through svc's
// real hot store (src/store/hot-store.ts):
//   - one shared cache of hot_max_bytes;
//   - two caches of hot_max_bytes / 2, each request going to a worker at random (the kernel hands
//     connections out; a connection's requests are independent draws, so a random worker per
//     request gives the same ratio);
//   - two caches of hot_max_bytes each (twice the memory);
// for hot tiers holding 1% to 50% of the keys. A miss stores the entry, as a cacheable miss does.
//
//   npm run build && node dist/bench/hot-split-hit-ratio.js [--requests 1000000] [--keys 100000] [--s 1.0] [--seed 22]
//
// It prints figures; it asserts nothing.
import { parseArgs } from 'node:util';
import { entrySizeBytes, type CacheEntry } from '../src/cache/entry.js';
import { benchEntry } from './support/bench-entry.js';
import { seededRandom } from './support/median-interval.js';
import { createHotStore, type HotStore } from '../src/store/hot-store.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '1000000' },
    keys: { type: 'string', default: '100000' },
    s: { type: 'string', default: '1.0' },
    seed: { type: 'string', default: '22' },
  },
});
const requests = Number(values.requests);
const keyCount = Number(values.keys);
const exponent = Number(values.s);


/** Key ranks 0..keys-1 drawn with P(rank r) ∝ 1 / (r + 1)^s, by inverse CDF. */
function zipfStream(count: number, keys: number, s: number, next: () => number): Uint32Array {
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

const body = Buffer.alloc(1024, 'x');
function entryFor(rank: number): CacheEntry {
  return benchEntry({ key: `https://example.com/asset/${rank}`, body, requestTimeMs: Date.now() });
}
const entrySize = entrySizeBytes(entryFor(keyCount));

/** The hit ratio of `stream` through `caches`, each request to the cache `pick` names. */
function hitRatio(stream: Uint32Array, caches: HotStore[], pick: () => number): number {
  let hits = 0;
  for (const rank of stream) {
    const cache = caches[pick()]!;
    const key = `https://example.com/asset/${rank}`;
    if (cache.variants(key).length > 0) hits++;
    else cache.put(entryFor(rank));
  }
  return hits / stream.length;
}

const stream = zipfStream(requests, keyCount, exponent, seededRandom(Number(values.seed)));
console.log(`Zipf s=${exponent}, ${requests.toLocaleString('en-US')} requests over ${keyCount.toLocaleString('en-US')} keys, ${entrySize} B per entry (1 KiB body)`);
console.log('hot tier holds   1 shared   2 split (half each)   2 x full size (2x memory)   split loses');
for (const share of [0.01, 0.05, 0.1, 0.25, 0.5]) {
  const maxBytes = Math.floor(share * keyCount) * entrySize;
  const shared = hitRatio(stream, [createHotStore({ maxBytes })], () => 0);
  const pickWorker = seededRandom(7);
  const split = hitRatio(stream, [createHotStore({ maxBytes: maxBytes / 2 }), createHotStore({ maxBytes: maxBytes / 2 })], () => (pickWorker() < 0.5 ? 0 : 1));
  const pickAgain = seededRandom(7);
  const doubled = hitRatio(stream, [createHotStore({ maxBytes }), createHotStore({ maxBytes })], () => (pickAgain() < 0.5 ? 0 : 1));
  const percent = (ratio: number): string => `${(ratio * 100).toFixed(1)}%`.padStart(6);
  console.log(
    `${`${(share * 100).toFixed(0)}% of keys`.padEnd(14)} ${percent(shared).padStart(9)}   ${percent(split).padStart(19)}   ${percent(doubled).padStart(25)}   ${((shared - split) * 100).toFixed(1).padStart(5)} points`,
  );
}
