// A real hot store, a real warm store in a temporary directory and a TieredCache wired as the node
// wires them, with an invalidation engine on top and a clock the test moves by hand.
import { Writable } from 'node:stream';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CacheEntry } from '../../src/cache/entry.js';
import { TieredCache, variantWithKey } from '../../src/store/tiered-cache.js';
import { createLogger } from '../../src/observe/logger.js';
import { createHotStore, type HotStore } from '../../src/store/hot-store.js';
import { openWarmStore, type WarmStore } from '../../src/store/warm/warm-store.js';
import { createInvalidator, type InvalidationEngine, type InvalidatorOptions } from '../../src/invalidation/create-invalidator.js';

/** 2023-11-14T22:13:20Z: a fixed start so times in failures are readable. */
export const T0 = 1_700_000_000_000;
export const HOUR_MS = 60 * 60 * 1000;

export class LogLines extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  }
}

export interface EntryParts {
  key?: string;
  variantKey?: string;
  tags?: readonly string[];
  requestTimeMs?: number;
  bodyBytes?: number;
}

export function entry(parts: EntryParts = {}): CacheEntry {
  const requestTimeMs = parts.requestTimeMs ?? T0;
  const variantKey = parts.variantKey ?? '';
  return {
    key: parts.key ?? 'http://example.com/a',
    variantKey,
    varyNames: variantKey === '' ? [] : ['accept-encoding'],
    status: 200,
    headers: ['Content-Type', 'text/plain', 'Cache-Control', 'max-age=3600'],
    body: Buffer.alloc(parts.bodyBytes ?? 16, 0x61),
    requestTimeMs,
    responseTimeMs: requestTimeMs + 5,
    correctedInitialAgeMs: 0,
    freshnessLifetimeMs: 3_600_000,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 0,
    mustRevalidate: false,
    noCache: false,
    etag: '"v1"',
    lastModified: undefined,
    surrogateControl: undefined,
    tags: parts.tags ?? [],
    forcedStale: false,
    route: 'test',
  };
}

export interface Rig {
  dir: string;
  hot: HotStore;
  warm: WarmStore;
  cache: TieredCache;
  invalidator: InvalidationEngine;
  logs: LogLines;
  clock: { ms: number };
  /** Stops the engine and closes the stores, keeping the directory (for a restart). */
  close(): Promise<void>;
  /** close() and remove the directory. */
  cleanup(): Promise<void>;
}

export interface RigOptions {
  /** Reuse a directory (a restart); a fresh temporary one otherwise. */
  dir?: string;
  hotMaxBytes?: number;
  /** Keep bans in memory only. */
  noJournal?: boolean;
  engine?: Partial<InvalidatorOptions>;
  startMs?: number;
}

export async function openRig(options: RigOptions = {}): Promise<Rig> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'svc-invalidation-')));
  const clock = { ms: options.startMs ?? T0 };
  const now = (): number => clock.ms;
  const warm = await openWarmStore({ path: join(dir, 'warm'), maxBytes: 64 * 1024 * 1024, writeQueueLength: 200_000, now });
  // Evictions demote through the cache, as the node wires it; the closure runs only after `cache` is set.
  const hot = createHotStore({ maxBytes: options.hotMaxBytes ?? 64 * 1024 * 1024, onEvict: (evicted) => cache.demote(evicted) });
  const cache = new TieredCache(hot, warm);
  const logs = new LogLines();
  const invalidator = createInvalidator({
    cache,
    logger: createLogger({ destination: logs }),
    dataDir: options.noJournal ? undefined : join(dir, 'invalidation'),
    now,
    ...options.engine,
  });
  await invalidator.start();
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await invalidator.stop();
    await warm.close();
  };
  return {
    dir,
    hot,
    warm,
    cache,
    invalidator,
    logs,
    clock,
    close,
    cleanup: async () => {
      await close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Whether the tier holds the variant (the exact entry object is not required). */
export function holds(store: HotStore | WarmStore, key: string, variantKey = ''): boolean {
  return store.variants(key).some((e) => e.variantKey === variantKey);
}

/** What the proxy does on a lookup: the selected variant, unless the lazy check hides it. */
export function serve(rig: Rig, key: string, variantKey = ''): CacheEntry | undefined {
  const hit = rig.cache.lookup(key, variantWithKey, variantKey);
  if (hit === undefined) return undefined;
  if (rig.invalidator.isInvalidated(hit.entry)) {
    rig.cache.delete(key, variantKey);
    return undefined;
  }
  return hit.entry;
}

/**
 * The warm tier's entries as a process killed right now would find them: the lmdb data file is
 * copied while the store stays open, and the copy opened as a fresh store.
 */
export async function diskSnapshot(rig: Rig): Promise<CacheEntry[]> {
  // Synchronous, so no pending write can land between the caller's await and the copy.
  const copy = mkdtempSync(join(tmpdir(), 'svc-invalidation-snapshot-'));
  try {
    mkdirSync(join(copy, 'warm'));
    copyFileSync(join(rig.dir, 'warm', 'data.mdb'), join(copy, 'warm', 'data.mdb'));
    const store = await openWarmStore({ path: join(copy, 'warm'), maxBytes: 64 * 1024 * 1024, writeQueueLength: 16 });
    try {
      return [...store.entries()];
    } finally {
      await store.close();
    }
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}
