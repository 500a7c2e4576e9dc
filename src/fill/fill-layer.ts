// The node's fill layer: where every miss becomes a busy fill, and a fill a stored entry. The cache
// flow (misses, revalidations, stale-while-revalidate), background refresh, peer fetch and the
// pass-through of requests svc does not cache all open their fills here, so the store gate, the
// memory bounds and the write-idle timeout hold for every one of them.
import type { CacheEntry } from '../cache/entry.js';
import type { HeaderLookup } from '../cache/policy/header-lookup.js';
import type { StoreGate } from '../invalidation/invalidation-sequence.js';
import type { TieredCache } from '../store/tiered-cache.js';
import { Fill, type FillDeps, type FillOpening } from './fill.js';
import { NO_FILL_COUNTERS, type FillCounters } from './fill-counters.js';
import { FillTable, type JoinedFill } from './fill-table.js';
import { openOnOrigin, type OriginFillRequest } from './origin-opening.js';

/**
 * 256 KiB: how far a fill that is not stored reads ahead of its fastest reader. Enough to keep the
 * origin connection busy while a client's socket drains (undici hands chunks of up to 64 KiB), small
 * enough that thousands of pass-through requests cost little memory.
 */
export const READ_AHEAD_BYTES = 256 * 1024;

export interface FillLayerOptions {
  /** Where complete fills are stored. */
  cache: TieredCache;
  /** The store gate (the invalidation engine); without one, fills store unconditionally. */
  gate?: StoreGate | undefined;
  now: () => number;
  /** `max_object_bytes`: the largest body stored, and the most a fill keeps in memory. */
  maxObjectBytes: number;
  /** `client_write_idle_timeout`. */
  writeIdleTimeoutMs: number;
  counters?: FillCounters;
}

export class FillLayer {
  readonly #table = new FillTable();
  #deps: FillDeps;
  readonly #options: FillLayerOptions;

  constructor(options: FillLayerOptions) {
    this.#options = options;
    const { cache } = options;
    this.#deps = {
      store: (entry) => cache.store(entry),
      gate: options.gate,
      maxObjectBytes: options.maxObjectBytes,
      readAheadBytes: READ_AHEAD_BYTES,
      writeIdleTimeoutMs: options.writeIdleTimeoutMs,
      counters: options.counters ?? NO_FILL_COUNTERS,
    };
  }

  /** `max_object_bytes`: the largest body a fill stores. */
  get maxObjectBytes(): number {
    return this.#deps.maxObjectBytes;
  }

  /** `max_object_bytes` changed (a configuration reload): fills that start from now on use it. */
  setMaxObjectBytes(bytes: number): void {
    this.#deps = { ...this.#deps, maxObjectBytes: bytes };
  }

  /** Whether `key` carries a live hit-for-pass marker: its requests go to the origin each alone. */
  passMarked(key: string): boolean {
    return this.#table.markers.has(key, this.#options.now());
  }

  /** Marks `key` hit-for-pass: another cache of the node passed its answer on, so will this one. */
  markPass(key: string): void {
    this.#table.markers.mark(key, this.#options.now());
  }

  /** A place in a busy fill of `key` that can answer a request with these fields, if there is one. */
  join(key: string, requestHeaders: HeaderLookup): Promise<JoinedFill | undefined> {
    return this.#table.join(key, requestHeaders);
  }

  /** Starts a fill on the origin; `shared` makes it the busy object other requests for the key join. */
  fromOrigin(ask: OriginFillRequest, shared: boolean): Fill {
    return this.open(ask.key, this.originOpening(ask), shared);
  }

  /** The opening of a fill on the origin, for a fill that may open elsewhere first (a peer). */
  originOpening(ask: OriginFillRequest): (fill: Fill) => Promise<FillOpening> {
    return openOnOrigin(
      {
        now: this.#options.now,
        deleteEntry: (entry) => void this.#options.cache.delete(entry.key, entry.variantKey),
        isStored: (entry) => isStillStored(this.#options.cache, entry),
        markers: this.#table.markers,
      },
      ask,
    );
  }

  /** Starts a fill over any source (a peer, a pass-through); never stored unless the opening says so. */
  open(key: string, opening: (fill: Fill) => Promise<FillOpening>, shared: boolean): Fill {
    const fill = new Fill(key, this.#deps, opening);
    if (shared) this.#table.add(fill);
    return fill;
  }
}

/** Whether `entry` is still what the tiers hold for its key and variant (not removed, not replaced). */
function isStillStored(cache: TieredCache, entry: CacheEntry): boolean {
  const same = (stored: CacheEntry): boolean => stored.variantKey === entry.variantKey;
  const current = cache.hot.peek(entry.key).find(same) ?? cache.warm?.peek(entry.key).find(same);
  return current !== undefined && current.responseTimeMs === entry.responseTimeMs && current.forcedStale === entry.forcedStale;
}
