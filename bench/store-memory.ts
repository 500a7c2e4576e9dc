// What the cache spends per entry beyond its body, and how fast each tier answers a lookup.
//
//   npx tsc -p tsconfig.json && node --expose-gc dist/bench/store-memory.js [entries]
//
// Fills a hot store with 100k entries (or [entries]; 256-byte bodies, the headers of a typical static
// asset) and prints the heap bytes per entry once nothing else holds them (the hot tier keeps its
// entries in shared memory, outside every thread's heap: what is left on the heap is its per-thread
// memo of header lists, bounded) and the shared memory per entry beyond its body (record header, head,
// key, index slot). Then it fills a warm store with the same entries, times its open (after which it
// serves: nothing is rebuilt), and prints variants(key) lookups per second for both tiers.
// It prints figures; it asserts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { CacheEntry } from '../src/cache/entry.js';
import { createHotStore } from '../src/store/hot-store.js';
import { openWarmStore } from '../src/store/warm/warm-store.js';

const ENTRY_COUNT = Number(process.argv[2] ?? 100_000);
const BODY_BYTES = 256;
const LOOKUPS = 500_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with node --expose-gc (see the top of bench/store-memory.ts)');
  process.exit(1);
}

/** A flat heap string, as a parser produces, rather than a cons string of a template literal. */
function flat(text: string): string {
  return Buffer.from(text, 'latin1').toString('latin1');
}

function keyOf(i: number): string {
  return flat(`https://static.example.com/assets/img/product-${i}.webp?v=3`);
}

function makeEntry(i: number): CacheEntry {
  const etag = flat(`"${(i * 2654435761).toString(16)}-${i}"`);
  const date = flat(new Date(1_700_000_000_000 + i * 1000).toUTCString());
  return {
    key: keyOf(i),
    variantKey: '',
    varyNames: [],
    status: 200,
    headers: [
      flat('Content-Type'), flat('image/webp'),
      flat('Content-Length'), flat(String(BODY_BYTES)),
      flat('Cache-Control'), flat('public, max-age=86400'),
      flat('ETag'), etag,
      flat('Last-Modified'), date,
      flat('Date'), date,
      flat('Server'), flat('nginx/1.25.3'),
      flat('Accept-Ranges'), flat('bytes'),
    ],
    body: randomBytes(BODY_BYTES),
    requestTimeMs: 1_700_000_000_000 + i,
    responseTimeMs: 1_700_000_000_020 + i,
    correctedInitialAgeMs: 0,
    freshnessLifetimeMs: 86_400_000,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 0,
    mustRevalidate: false,
    noCache: false,
    etag,
    lastModified: date,
    tags: [],
    forcedStale: false,
    surrogateControl: undefined,
    route: 'assets',
  };
}

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function lookupsPerSecond(lookup: (key: string) => unknown, keys: readonly string[]): number {
  let sink = 0;
  const startedMs = performance.now();
  for (let i = 0; i < LOOKUPS; i += 1) {
    if (lookup(keys[(i * 7919) % keys.length] as string) !== undefined) sink += 1;
  }
  const elapsedMs = performance.now() - startedMs;
  if (sink !== LOOKUPS) console.error('some lookups failed');
  return Math.round((LOOKUPS / elapsedMs) * 1000);
}

const baseline = heapUsed();
let entries: CacheEntry[] | undefined = Array.from({ length: ENTRY_COUNT }, (_, i) => makeEntry(i));
const hot = createHotStore({ maxBytes: ENTRY_COUNT * 1024 });
for (const entry of entries) hot.put(entry);
entries = undefined;
const storeOnly = heapUsed();
const keys = Array.from({ length: ENTRY_COUNT }, (_, i) => keyOf(i));

const slotBytes = hot.memory.slots.byteLength / (hot.memory.slots.byteLength / 16) + 1;
console.log(`entries: ${ENTRY_COUNT} (${hot.entryCount} held), body ${BODY_BYTES} B, ${(hot.byteCount / hot.entryCount).toFixed(0)} B per record`);
console.log(`hot tier, heap per entry (nothing else held):     ${((storeOnly - baseline) / ENTRY_COUNT).toFixed(1)} heap B/entry`);
console.log(`cached entry in shared memory, body excluded:     ${(hot.byteCount / hot.entryCount - BODY_BYTES + slotBytes).toFixed(1)} B/entry (record ${(hot.byteCount / hot.entryCount - BODY_BYTES).toFixed(0)}, index slot and reference bit ${slotBytes})`);

const hotRate = lookupsPerSecond((key) => hot.variants(key)[0], keys);
console.log(`hot  variants(key): ${hotRate.toLocaleString('en-US')} ops/s`);

const path = await mkdtemp(join(tmpdir(), 'svc-bench-warm-'));
try {
  const options = { path, maxBytes: 4 * 1024 * 1024 * 1024, writeQueueLength: ENTRY_COUNT };
  const filling = await openWarmStore(options);
  for (const entry of hot.entries()) filling.put(entry);
  await filling.close();
  // Nothing is rebuilt: the store serves once open (its memory: bench/warm-index-memory.ts).
  const openedAtMs = performance.now();
  const warm = await openWarmStore(options);
  const openMs = performance.now() - openedAtMs;
  console.log(`warm open of ${warm.openReport.entryCount} entries: serving in ${openMs.toFixed(0)} ms`);
  const warmRate = lookupsPerSecond((key) => warm.variants(key)[0], keys);
  console.log(`warm variants(key): ${warmRate.toLocaleString('en-US')} ops/s (${(hotRate / warmRate).toFixed(1)}x slower than hot)`);
  await warm.close();
} finally {
  await rm(path, { recursive: true, force: true });
}
