// How long a ban over many hot entries holds the event loop, and what the retention sweep costs with
// and without reading bodies (issue 15 item 4).
//
//   npx tsc -p tsconfig.json && node --max-old-space-size=8192 dist/bench/ban-lurker-stall.js [--entries 100000,1000000] [--warm-entries 100000]
//
// Stalls: the hot tier is filled with N entries, then one ban evicts all of them, first by surrogate
// key (the tag index), then by path regex (a walk of the whole tier), then a path-regex ban that
// matches nothing. While each ban runs, a timer probe that re-arms itself every millisecond records
// the longest gap between two of its runs (the longest stall), the longest once the garbage
// collections inside it are taken out (GC pauses grow with the heap, and a scavenge waits for helper
// threads a loaded machine may not run; try --single-threaded-gc), the most CPU time the main thread
// ran within one gap (on a shared machine a gap also holds waits for a CPU), and perf_hooks'
// monitorEventLoopDelay the same from its own sampling; all minus the 1 ms they expect. With --warm-entries, one more
// round runs with a warm tier written through (each eviction also deletes a record on disk).
// Sweep: a warm tier of --warm-entries entries with 2 KiB bodies is swept by a ban that hides none
// of them, once through entries() (every record read and decoded, as before issue 15) and once
// through summaries() (the in-memory index only), and then a real prune is timed.
// It prints figures; it asserts nothing.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { CacheEntry } from '../src/cache/entry.js';
import { TieredCache } from '../src/store/tiered-cache.js';
import { compileBan } from '../src/invalidation/ban.js';
import { BanList } from '../src/invalidation/ban-list.js';
import { BAN_RETENTION_MS, createInvalidator } from '../src/invalidation/create-invalidator.js';
import type { BanSpec } from '../src/invalidation/invalidator.js';
import { createLogger } from '../src/observe/logger.js';
import { createHotStore } from '../src/store/hot-store.js';
import { openWarmStore, type WarmStore } from '../src/store/warm/warm-store.js';
import { benchEntry } from './support/bench-entry.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000,1000000' },
    'warm-entries': { type: 'string', default: '100000' },
  },
});
const HOT_COUNTS = values.entries.split(',').map(Number);
const WARM_ENTRIES = Number(values['warm-entries']);
const T0 = 1_700_000_000_000;
const SMALL_BODY = Buffer.alloc(64, 0x61);

function makeEntry(i: number, body: Buffer): CacheEntry {
  return benchEntry({ key: `http://shop.example/evict/item-${i}`, body, tags: ['sale', `product-${i}`], requestTimeMs: T0 });
}

/** CPU time the calling (main) thread has run, in ns; NaN where Linux's schedstat is not there. */
function mainThreadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

interface Stalls {
  /** Longest gap between two runs of the 1 ms timer, minus 1 ms. */
  probeMs: number;
  /** Longest gap once the garbage collections inside it are taken out. */
  outsideGcMs: number;
  /**
   * Most CPU time the main thread itself ran within one gap (Linux's schedstat): a stall without the
   * time the thread waited for a CPU other processes held. NaN where schedstat is not readable.
   */
  mainThreadCpuMs: number;
  /** monitorEventLoopDelay's max, minus its 1 ms resolution. */
  histogramMs: number;
  /** Longest garbage collection V8 reported meanwhile (part of a stall, but not the walk's own work). */
  gcMs: number;
}

/** Records the longest gap between runs of a 1 ms timer, the event-loop delay histogram's max and the longest GC. */
function startStallProbe(): () => Stalls {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const collections: { start: number; end: number }[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push({ start: entry.startTime, end: entry.startTime + entry.duration });
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const gaps: { start: number; end: number }[] = [];
  let last = performance.now();
  let lastCpuNs = mainThreadCpuNs();
  let mainThreadCpuMs = 0;
  let timer: NodeJS.Timeout;
  const tick = (): void => {
    const now = performance.now();
    const cpuNs = mainThreadCpuNs();
    if (now - last > 2) gaps.push({ start: last, end: now });
    mainThreadCpuMs = Math.max(mainThreadCpuMs, (cpuNs - lastCpuNs) / 1e6 - 1);
    last = now;
    lastCpuNs = mainThreadCpuNs();
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  return () => {
    clearTimeout(timer);
    histogram.disable();
    gcObserver.disconnect();
    const overlap = (gap: { start: number; end: number }): number =>
      collections.reduce((sum, gc) => sum + Math.max(0, Math.min(gap.end, gc.end) - Math.max(gap.start, gc.start)), 0);
    const length = (gap: { start: number; end: number }): number => gap.end - gap.start - 1;
    return {
      probeMs: Math.max(0, ...gaps.map(length)),
      outsideGcMs: Math.max(0, ...gaps.map((gap) => length(gap) - overlap(gap))),
      mainThreadCpuMs: Math.max(0, mainThreadCpuMs),
      histogramMs: histogram.max / 1e6 - 1,
      gcMs: Math.max(0, ...collections.map((gc) => gc.end - gc.start)),
    };
  };
}

const quietLogger = createLogger({ destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });

async function stallRound(entries: number, spec: BanSpec, label: string, warmDir: string | undefined): Promise<void> {
  let warm: WarmStore | undefined;
  if (warmDir !== undefined) {
    warm = await openWarmStore({ path: join(warmDir, `round-${Date.now()}`), maxBytes: 8 * 1024 * 1024 * 1024, writeQueueLength: entries });
  }
  const clock = { ms: T0 };
  const hot = createHotStore({ maxBytes: 16 * 1024 * 1024 * 1024, onEvict: (entry) => cache.demote(entry) });
  const cache = new TieredCache(hot, warm);
  for (let i = 0; i < entries; i += 1) cache.store(makeEntry(i, SMALL_BODY));
  await warm?.flush();
  const invalidator = createInvalidator({ cache, logger: quietLogger, now: () => clock.ms });
  await invalidator.start();
  // Filling left garbage: collect it, and let the collector's concurrent sweeping end (a forced GC
  // makes the next accesses to the heap finish it, 100 ms and more with a million entries), so the
  // probe measures the ban and not the bench's own set-up.
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  clock.ms = T0 + 1000;
  const stop = startStallProbe();
  const started = performance.now();
  const { count } = await invalidator.ban(spec);
  const answeredMs = performance.now() - started;
  await warm?.flush();
  const { probeMs, outsideGcMs, mainThreadCpuMs, histogramMs, gcMs } = stop();
  console.log(
    `${String(entries).padStart(8)} ${label.padEnd(30)} ${String(count).padStart(8)} evicted, answered in ${answeredMs.toFixed(0).padStart(5)} ms; longest stall ${probeMs.toFixed(1).padStart(6)} ms, outside GC ${outsideGcMs.toFixed(1).padStart(5)} ms, main-thread CPU ${mainThreadCpuMs.toFixed(1).padStart(5)} ms (monitorEventLoopDelay ${histogramMs.toFixed(1).padStart(6)} ms; longest GC ${gcMs.toFixed(1).padStart(5)} ms)`,
  );
  await invalidator.stop();
  await warm?.close();
}

/** The same probe over an idle second: what the machine itself does to a timer (other processes). */
async function idleStalls(): Promise<void> {
  const stop = startStallProbe();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { probeMs, mainThreadCpuMs, histogramMs } = stop();
  console.log(`idle for 1 s: longest stall ${probeMs.toFixed(1)} ms, main-thread CPU ${mainThreadCpuMs.toFixed(1)} ms (monitorEventLoopDelay ${histogramMs.toFixed(1)} ms): the machine's own noise`);
}

async function stalls(warmDir: string): Promise<void> {
  console.log('event-loop stalls while one ban evicts from the hot tier (probe: a 1 ms timer)');
  await idleStalls();
  for (const entries of HOT_COUNTS) {
    await stallRound(entries, { surrogate_key: 'sale' }, 'surrogate_key ban, all match', undefined);
    await stallRound(entries, { path_regex: '^/evict/' }, 'path_regex ban, all match', undefined);
    await stallRound(entries, { path_regex: '^/nothing/' }, 'path_regex ban, none match', undefined);
  }
  if (WARM_ENTRIES > 0) {
    console.log('with a warm tier written through (each eviction deletes a record on disk)');
    await stallRound(WARM_ENTRIES, { path_regex: '^/evict/' }, 'path_regex ban, all match', warmDir);
  }
}

async function sweeps(warmDir: string): Promise<void> {
  if (WARM_ENTRIES === 0) return;
  const body = Buffer.alloc(2048, 0x62);
  const warm = await openWarmStore({ path: join(warmDir, 'sweep'), maxBytes: 8 * 1024 * 1024 * 1024, writeQueueLength: WARM_ENTRIES });
  for (let i = 0; i < WARM_ENTRIES; i += 1) warm.put(makeEntry(i, body));
  await warm.flush();
  console.log(`\nretention sweep over a warm tier of ${warm.entryCount} entries (2 KiB bodies), a ban hiding none of them`);
  const bans = new BanList();
  bans.add(compileBan('expiring', T0 + 1000, { path_regex: '^/nothing/' }));
  const time = (label: string, subjects: Iterable<{ key: string; requestTimeMs: number; tags: readonly string[] }>): void => {
    const started = performance.now();
    let visited = 0;
    let hidden = 0;
    for (const subject of subjects) {
      visited += 1;
      if (bans.hides(subject) !== undefined) hidden += 1;
    }
    console.log(`${label.padEnd(44)} ${visited} visited, ${hidden} hidden in ${(performance.now() - started).toFixed(0)} ms`);
  };
  time('entries(): every record read and decoded', warm.entries());
  time('summaries(): the in-memory index only', warm.summaries());

  // The engine's own prune over the same tier (and an empty hot tier), bodies never read.
  const clock = { ms: T0 + 1000 };
  const cache = new TieredCache(createHotStore({ maxBytes: 1024 * 1024 }), warm);
  const invalidator = createInvalidator({ cache, logger: quietLogger, now: () => clock.ms });
  await invalidator.start();
  await invalidator.ban({ path_regex: '^/nothing/' });
  clock.ms = T0 + 1000 + BAN_RETENTION_MS;
  const stop = startStallProbe();
  const started = performance.now();
  const report = await invalidator.pruneNow();
  const { probeMs, outsideGcMs, mainThreadCpuMs, gcMs } = stop();
  console.log(
    `${'pruneNow() (summaries, time-sliced)'.padEnd(44)} ${report.bansPruned} ban pruned, ${report.entriesDeleted} deleted in ${(performance.now() - started).toFixed(0)} ms; longest stall ${probeMs.toFixed(1)} ms, outside GC ${outsideGcMs.toFixed(1)} ms, main-thread CPU ${mainThreadCpuMs.toFixed(1)} ms (longest GC ${gcMs.toFixed(1)} ms)`,
  );
  await invalidator.stop();
  await warm.close();
}

const warmDir = await mkdtemp(join(tmpdir(), 'svc-bench-lurker-'));
try {
  await stalls(warmDir);
  await sweeps(warmDir);
} finally {
  await rm(warmDir, { recursive: true, force: true });
}
