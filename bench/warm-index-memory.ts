// What the warm tier's owner keeps in memory per warm key, and how soon a restarted store serves
// (issue 29 item 2: at most 100 B of heap and of anonymous memory per warm key beyond a fixed base).
//
//   npx tsc -p tsconfig.json && node --expose-gc dist/bench/warm-index-memory.js [keys…]
//
// For each size (default 1,000,000 and 5,000,000 keys) a child process fills a fresh warm store
// through its API (100-byte bodies), and another opens it, as a restarted node would: it times the
// open and the first lookup, looks up 100,000 keys and walks every summary (what a ban's sweep reads),
// then, after a GC, prints its resident set, V8 heap used and anonymous memory (smaps_rollup), minus
// the same figures of a child that did the same over an empty store. Each measurement starts in a
// clean process. The resident set includes lmdb's file-backed map pages, which the kernel may drop and
// read again; the anonymous memory does not. The default took 29 minutes on 2 loaded cores,
// most of it filling (every 512 writes are one fsync'd transaction). It prints figures; it asserts nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openWarmStore, type WarmStore } from '../src/store/warm/warm-store.js';
import { benchEntry } from './support/bench-entry.js';
import { anonymousBytes, mib, rssBytes } from './support/memory.js';

const BODY = Buffer.alloc(100, 0x62);
/** Puts that wait for disk at once while filling: the fill flushes after each such chunk. */
const FILL_CHUNK = 100_000;
const LOOKUPS = 100_000;
const MAX_BYTES = 64 * 1024 * 1024 * 1024;

interface Memory {
  rssBytes: number;
  heapUsedBytes: number;
  /** V8's heaps as committed (used or not): part of the anonymous memory. */
  heapTotalBytes: number;
  anonymousBytes: number;
}

interface Measured {
  keys: number;
  openMs: number;
  firstLookupMs: number;
  lookupsPerSecond: number;
  walkMs: number;
  walked: number;
  /** Once open and the first lookup answered. */
  opened: Memory;
  /** After the lookups and the walk. */
  worked: Memory;
}

const keyOf = (i: number): string => `https://bench.example/item/${i}`;

function open(path: string, writeQueueLength = FILL_CHUNK): Promise<WarmStore> {
  return openWarmStore({ path, maxBytes: MAX_BYTES, writeQueueLength });
}

/** Memory now, after a full GC (run with --expose-gc). */
function memoryNow(): Memory {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc (see the top of bench/warm-index-memory.ts)');
  gc();
  gc();
  const { heapUsed, heapTotal } = process.memoryUsage();
  return { rssBytes: rssBytes(process.pid), heapUsedBytes: heapUsed, heapTotalBytes: heapTotal, anonymousBytes: anonymousBytes(process.pid) };
}

async function fill(path: string, keys: number): Promise<void> {
  const store = await open(path);
  for (let from = 0; from < keys; from += FILL_CHUNK) {
    for (let i = from; i < Math.min(keys, from + FILL_CHUNK); i += 1) {
      store.put(benchEntry({ key: keyOf(i), body: BODY, requestTimeMs: 1_700_000_000_000 + i }));
    }
    await store.flush();
  }
  if (store.entryCount !== keys || store.droppedWrites !== 0) throw new Error(`filled ${store.entryCount} of ${keys}, dropped ${store.droppedWrites}`);
  await store.close();
}

/** A restart: open, first lookup, lookups over the keys, a sweep's walk; then memory. */
async function measure(path: string, keys: number): Promise<Measured> {
  const openedAt = performance.now();
  const store = await open(path, 1_024);
  const openMs = performance.now() - openedAt;
  const lookedUpAt = performance.now();
  const first = store.variants(keyOf(Math.floor(keys / 2)));
  const firstLookupMs = performance.now() - lookedUpAt;
  if (keys > 0 && first.length !== 1) throw new Error('the first lookup found nothing');
  const opened = memoryNow();
  const lookupsAt = performance.now();
  for (let i = 0; i < LOOKUPS; i += 1) store.peek(keyOf((i * 7_919) % Math.max(1, keys)));
  const lookupsPerSecond = Math.round(LOOKUPS / ((performance.now() - lookupsAt) / 1000));
  const walkAt = performance.now();
  let walked = 0;
  for (const summary of store.summaries()) if (summary.tags.length === 0) walked += 1;
  const walkMs = performance.now() - walkAt;
  if (walked !== keys || store.entryCount !== keys) throw new Error(`walked ${walked}, counted ${store.entryCount}, of ${keys}`);
  const worked = memoryNow();
  await store.close();
  return { keys, openMs, firstLookupMs, lookupsPerSecond, walkMs, walked, opened, worked };
}

/** Runs this file as a child: `fill` or `measure`, with a clean heap. */
function child(phase: 'fill' | 'measure', path: string, keys: number): string {
  return execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), phase, path, String(keys)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

const [phase, childPath, childKeys] = process.argv.slice(2);
if (phase === 'fill') {
  await fill(childPath!, Number(childKeys));
} else if (phase === 'measure') {
  process.stdout.write(JSON.stringify(await measure(childPath!, Number(childKeys))));
} else {
  const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [1_000_000, 5_000_000];
  const measureOnce = (path: string, keys: number): Measured => JSON.parse(child('measure', path, keys)) as Measured;
  const emptyDir = mkdtempSync(join(tmpdir(), 'svc-bench-warm-index-'));
  try {
    const base = measureOnce(emptyDir, 0);
    const show = (m: Memory): string => `RSS ${mib(m.rssBytes)}, heap used ${mib(m.heapUsedBytes)} (committed ${mib(m.heapTotalBytes)}), anonymous ${mib(m.anonymousBytes)}`;
    console.log(`base (empty store, open): ${show(base.opened)}; after the same lookups: ${show(base.worked)}`);
    for (const keys of sizes) {
      const path = mkdtempSync(join(tmpdir(), 'svc-bench-warm-index-'));
      try {
        const filledAt = performance.now();
        child('fill', path, keys);
        const fillS = (performance.now() - filledAt) / 1000;
        const m = measureOnce(path, keys);
        const perKey = (at: Memory, baseAt: Memory): string =>
          (['heapUsedBytes', 'anonymousBytes', 'rssBytes'] as const)
            .map((field) => `${field === 'heapUsedBytes' ? 'heap' : field === 'anonymousBytes' ? 'anonymous' : 'RSS'} ${((at[field] - baseAt[field]) / keys).toFixed(1)} B`)
            .join(', ');
        console.log(`${keys.toLocaleString('en-US')} warm keys (filled in ${fillS.toFixed(0)} s), per key beyond the base:`);
        console.log(`  open, first lookup answered: ${perKey(m.opened, base.opened)} (${show(m.opened)})`);
        console.log(`  after ${LOOKUPS.toLocaleString('en-US')} lookups and a sweep's walk: ${perKey(m.worked, base.worked)} (${show(m.worked)})`);
        console.log(
          `  restart: open ${m.openMs.toFixed(1)} ms, first lookup ${m.firstLookupMs.toFixed(2)} ms; ` +
            `${m.lookupsPerSecond.toLocaleString('en-US')} lookups/s; a sweep's walk of ${m.walked.toLocaleString('en-US')} summaries ${(m.walkMs / 1000).toFixed(1)} s`,
        );
      } finally {
        rmSync(path, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(emptyDir, { recursive: true, force: true });
  }
}
