// What active bans cost the lazy check, and what a ban costs in memory.
//
//   npx tsc -p tsconfig.json && node --expose-gc dist/bench/ban-lookup.js [--entries 10000]
//
// For 0, 1,000, 10,000 and 100,000 active bans (40% surrogate key, 30% path regex, 10% host regex,
// 20% host and path regex over 50 hosts; none matches the entries), hot entries all fetched before
// every ban (the worst case: no ban can be skipped for being older than the entry):
// - cold: the first check of each entry after the bans came, which matches it against the RE2 sets;
// - warm: a later check of the same entry, which only looks at bans that arrived since (none);
// - lookup+check: a TieredCache lookup followed by the check, as a HIT does (warm);
// - memory per ban: heap and RSS growth over the bans, after a GC (from 10,000 bans up).
// Then how long one ban takes to evict 100,000 hot entries (the lurker yields to the event loop as
// it goes). Bans are kept in memory (no journal), so no fsync is timed. It prints figures; it asserts
// nothing.
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { CacheEntry } from '../src/cache/entry.js';
import { TieredCache, variantWithKey } from '../src/store/tiered-cache.js';
import { createLogger } from '../src/observe/logger.js';
import { createHotStore } from '../src/store/hot-store.js';
import { createInvalidator, type InvalidationEngine } from '../src/invalidation/create-invalidator.js';
import type { BanSpec } from '../src/invalidation/invalidator.js';
import { benchBan, lookupHost, lookupPath } from './support/ban-mix.js';
import { benchEntry } from './support/bench-entry.js';

const { values } = parseArgs({ options: { entries: { type: 'string', default: '10000' } } });
const LOOKUP_ENTRIES = Number(values.entries);
const T0 = 1_700_000_000_000;
const BAN_COUNTS = [0, 1_000, 10_000, 100_000];
const EVICT_ENTRIES = 100_000;
const MEASURE_MS = 1_000;
const BODY = Buffer.alloc(256, 0x61);

function makeEntry(key: string, tags: readonly string[], requestTimeMs: number): CacheEntry {
  return benchEntry({ key, tags, requestTimeMs, body: BODY });
}

interface Rig {
  cache: TieredCache;
  invalidator: InvalidationEngine;
  clock: { ms: number };
}

async function openRig(): Promise<Rig> {
  const clock = { ms: T0 };
  const hot = createHotStore({ maxBytes: 4 * 1024 * 1024 * 1024, onEvict: (entry) => cache.demote(entry) });
  const cache = new TieredCache(hot, undefined);
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const invalidator = createInvalidator({
    cache,
    logger: createLogger({ destination: sink }),
    now: () => clock.ms,
    maxActiveBans: 1_000_000,
  });
  await invalidator.start();
  return { cache, invalidator, clock };
}

function lookupKey(i: number): string {
  return `http://${lookupHost(i)}${lookupPath(i)}`;
}

function fmt(perSecond: number): string {
  return perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(2)}M` : `${(perSecond / 1e3).toFixed(1)}k`;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
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

async function lookups(): Promise<void> {
  console.log(`lazy check over ${LOOKUP_ENTRIES} hot entries fetched before every ban (none hidden)`);
  console.log('bans      cold µs/check  warm µs/check  lookup+check (warm)  heap B/ban  RSS B/ban');
  if ((globalThis as { gc?: unknown }).gc === undefined) console.log('(run with --expose-gc for the memory figures)');
  for (const banCount of BAN_COUNTS) {
    const rig = await openRig();
    gc();
    const before = process.memoryUsage();
    for (let i = 0; i < banCount; i += 1) {
      rig.clock.ms = T0 + 1 + i;
      await rig.invalidator.ban(benchBan(i));
    }
    gc();
    const after = process.memoryUsage();
    // Stored after the bans (the lurker had nothing to walk), but fetched before all of them.
    const keys: string[] = [];
    for (let i = 0; i < LOOKUP_ENTRIES; i += 1) {
      keys.push(lookupKey(i));
      rig.cache.store(makeEntry(lookupKey(i), [`product-${i}`, 'catalogue'], T0));
    }
    const entries = keys.map((key) => rig.cache.hot.variants(key)[0] as CacheEntry);
    let hidden = 0;
    const coldStarted = performance.now();
    for (const entry of entries) if (rig.invalidator.isInvalidated(entry)) hidden += 1;
    const coldUs = ((performance.now() - coldStarted) * 1000) / entries.length;
    let next = 0;
    const warm = opsPerSecond(() => {
      for (let n = 0; n < 100; n += 1) {
        next = (next + 1) % entries.length;
        if (rig.invalidator.isInvalidated(entries[next] as CacheEntry)) hidden += 1;
      }
      return 100;
    });
    const lookup = opsPerSecond(() => {
      for (let n = 0; n < 100; n += 1) {
        next = (next + 1) % keys.length;
        const hit = rig.cache.lookup(keys[next] as string, variantWithKey, '');
        if (hit !== undefined && rig.invalidator.isInvalidated(hit.entry)) hidden += 1;
      }
      return 100;
    });
    // Below 10,000 bans the growth (about 1.5 MB) is within what the heap itself moves between runs.
    const perBan = (bytes: number): string => (banCount < 10_000 ? '-' : String(Math.round(bytes / banCount)));
    console.log(
      `${String(banCount).padEnd(9)} ${coldUs.toFixed(2).padStart(13)}  ${(1e6 / warm).toFixed(3).padStart(13)}  ${`${fmt(lookup)}/s`.padStart(19)}  ${perBan(after.heapUsed - before.heapUsed).padStart(10)}  ${perBan(after.rss - before.rss).padStart(9)}${hidden > 0 ? `  (${hidden} hidden!)` : ''}`,
    );
    await rig.invalidator.stop();
  }
}

async function timeBan(label: string, fill: (rig: Rig) => void, spec: BanSpec): Promise<void> {
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
  console.log(`\neager eviction from ${EVICT_ENTRIES} hot entries (the answer waits for the lurker's walk)`);
  const fill = (rig: Rig): void => {
    for (let i = 0; i < EVICT_ENTRIES; i += 1) {
      rig.cache.store(makeEntry(`http://shop.example/evict/item-${i}`, ['sale', `product-${i}`], T0));
    }
  };
  await timeBan('surrogate_key ban (tag index), all match', fill, { surrogate_key: 'sale' });
  await timeBan('path_regex ban (hot-tier walk), all match', fill, { path_regex: '^/evict/' });
  await timeBan('path_regex ban (hot-tier walk), none match', fill, { path_regex: '^/nothing/' });
}

await lookups();
await evictions();
