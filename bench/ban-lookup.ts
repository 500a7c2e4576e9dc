// What active bans cost a lookup, and how long one ban takes to evict 100,000 hot entries.
//
//   npx tsc -p tsconfig.json && node dist/bench/ban-lookup.js
//
// Lookups: 10,000 hot entries, then isInvalidated alone and a TieredCache lookup followed by
// isInvalidated, first with no ban, then with 10,000 active bans (5,000 surrogate-key, 4,000
// path-regex, 1,000 host-regex; none matches the entries, so every check runs to its end). Entries
// fetched after most bans (10 newer than them) show the usual case; entries fetched before every
// ban show the worst case, where the lazy check walks every regex ban.
// Eviction: 100,000 matching hot entries, evicted by a surrogate-key ban (through the tag index) and
// by a path-regex ban (a scan of the hot tier); plus a regex ban that matches nothing, for the
// cost of the scan alone. Bans are kept in memory (no journal), so no fsync is timed.
// It prints figures; it asserts nothing.
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { CacheEntry } from '../src/cache/entry.js';
import { TieredCache, variantWithKey } from '../src/cache/tiered-cache.js';
import { createLogger } from '../src/observe/logger.js';
import { createHotStore } from '../src/store/hot-store.js';
import { createInvalidator, type InvalidationEngine } from '../src/invalidation/create-invalidator.js';

const T0 = 1_700_000_000_000;
const LOOKUP_ENTRIES = 10_000;
const BAN_COUNT = 10_000;
const EVICT_ENTRIES = 100_000;
const MEASURE_MS = 1_000;

function makeEntry(key: string, tags: readonly string[], requestTimeMs: number): CacheEntry {
  return {
    key,
    variantKey: '',
    varyNames: [],
    status: 200,
    headers: ['Content-Type', 'text/html; charset=utf-8', 'Cache-Control', 'public, max-age=3600', 'ETag', '"abc"'],
    body: Buffer.alloc(256, 0x61),
    requestTimeMs,
    responseTimeMs: requestTimeMs + 20,
    correctedInitialAgeMs: 0,
    freshnessLifetimeMs: 3_600_000,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 0,
    mustRevalidate: false,
    noCache: false,
    etag: '"abc"',
    lastModified: undefined,
    surrogateControl: undefined,
    tags,
    forcedStale: false,
    route: 'bench',
  };
}

interface Rig {
  cache: TieredCache;
  invalidator: InvalidationEngine;
  clock: { ms: number };
}

async function openRig(): Promise<Rig> {
  const clock = { ms: T0 };
  const hot = createHotStore({ maxBytes: 2 * 1024 * 1024 * 1024, onEvict: (entry) => cache.demote(entry) });
  const cache = new TieredCache(hot, undefined);
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const invalidator = createInvalidator({ cache, logger: createLogger({ destination: sink }), now: () => clock.ms });
  await invalidator.start();
  return { cache, invalidator, clock };
}

/** Runs `batch` until MEASURE_MS have passed; returns operations per second. */
function opsPerSecond(batch: () => number): number {
  let ops = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < MEASURE_MS) {
    ops += batch();
    elapsed = performance.now() - started;
  }
  return (ops / elapsed) * 1000;
}

function lookupEntries(rig: Rig, requestTimeMs: number): string[] {
  const keys: string[] = [];
  for (let i = 0; i < LOOKUP_ENTRIES; i += 1) {
    const key = `http://shop-${i % 100}.example/catalogue/item-${i}?page=${i % 7}`;
    rig.cache.store(makeEntry(key, [`product-${i}`, 'catalogue'], requestTimeMs));
    keys.push(key);
  }
  return keys;
}

/** Keys are taken in slices of this many, so a slow case does not run far past MEASURE_MS. */
const SLICE = 100;

function measureLookups(rig: Rig, keys: readonly string[], label: string): void {
  const entries = keys.map((key) => rig.cache.hot.variants(key)[0] as CacheEntry);
  let hidden = 0;
  let next = 0;
  const check = opsPerSecond(() => {
    next = (next + SLICE) % entries.length;
    for (let i = next; i < next + SLICE; i += 1) if (rig.invalidator.isInvalidated(entries[i] as CacheEntry)) hidden += 1;
    return SLICE;
  });
  const lookup = opsPerSecond(() => {
    next = (next + SLICE) % keys.length;
    for (let i = next; i < next + SLICE; i += 1) {
      const hit = rig.cache.lookup(keys[i] as string, variantWithKey, '');
      if (hit !== undefined && rig.invalidator.isInvalidated(hit.entry)) hidden += 1;
    }
    return SLICE;
  });
  const perCheckUs = 1e6 / check;
  console.log(
    `${label.padEnd(52)} isInvalidated ${fmt(check)}/s (${perCheckUs.toFixed(2)} µs)   lookup+check ${fmt(lookup)}/s${hidden > 0 ? `  (${hidden} hidden!)` : ''}`,
  );
}

function fmt(perSecond: number): string {
  return perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(2)}M` : `${(perSecond / 1e3).toFixed(1)}k`;
}

async function addBans(rig: Rig): Promise<void> {
  for (let i = 0; i < BAN_COUNT; i += 1) {
    rig.clock.ms = T0 + 1 + i;
    if (i % 2 === 0) await rig.invalidator.ban({ surrogate_key: `campaign-${i}` });
    else if (i % 10 !== 9) await rig.invalidator.ban({ path_regex: `^/section-${i}/` });
    else await rig.invalidator.ban({ host_regex: `^origin-${i}\\.example$` });
  }
}

async function lookups(): Promise<void> {
  console.log(`lazy check over ${LOOKUP_ENTRIES} hot entries (none hidden)`);
  const none = await openRig();
  measureLookups(none, lookupEntries(none, T0), 'no bans');
  await none.invalidator.stop();

  const after = await openRig();
  await addBans(after);
  measureLookups(after, lookupEntries(after, T0 + BAN_COUNT - 10), `${BAN_COUNT} bans, entries fetched after all but 10`);
  await after.invalidator.stop();

  const before = await openRig();
  const keys = lookupEntries(before, T0);
  await addBans(before);
  measureLookups(before, keys, `${BAN_COUNT} bans, entries fetched before every ban`);
  await before.invalidator.stop();
}

async function timeBan(label: string, fill: (rig: Rig) => void, spec: Parameters<InvalidationEngine['ban']>[0]): Promise<void> {
  const rig = await openRig();
  fill(rig);
  rig.clock.ms = T0 + 1;
  const started = performance.now();
  const { count } = await rig.invalidator.ban(spec);
  const elapsedMs = performance.now() - started;
  console.log(`${label.padEnd(52)} ${count} evicted in ${elapsedMs.toFixed(1)} ms (${rig.cache.hot.entryCount} left)`);
  await rig.invalidator.stop();
}

async function evictions(): Promise<void> {
  console.log(`\neager eviction from ${EVICT_ENTRIES} hot entries`);
  const fill = (rig: Rig): void => {
    for (let i = 0; i < EVICT_ENTRIES; i += 1) {
      rig.cache.store(makeEntry(`http://shop.example/evict/item-${i}`, ['sale', `product-${i}`], T0));
    }
  };
  await timeBan('surrogate_key ban (tag index), all match', fill, { surrogate_key: 'sale' });
  await timeBan('path_regex ban (hot-tier scan), all match', fill, { path_regex: '^/evict/' });
  await timeBan('path_regex ban (hot-tier scan), none match', fill, { path_regex: '^/nothing/' });
}

await lookups();
await evictions();
