// `GET /v1/debug/cachecheck?url=`: what svc holds for a URL and how a plain GET of it would be
// answered, read from both tiers without changing them: no promotion, and no change to the order in
// which entries are evicted.
import type { CacheEntry } from '../cache/entry.js';
import type { Config } from '../config/index.js';
import type { TieredCache } from '../store/tiered-cache.js';
import { currentAgeMs } from '../cache/policy/age.js';
import { reuseOutlook } from '../cache/policy/reuse-outlook.js';
import { NO_HEADERS } from '../cache/policy/header-lookup.js';
import { variantKey } from '../cache/policy/vary.js';
import type { CacheCheckProvider } from '../api/providers.js';
import type { CacheCheckVariant } from '../api/responses.js';
import type { ActiveBan } from '../invalidation/invalidator.js';
import { keyOfUrl } from '../invalidation/url-key.js';
import { InvalidUrlError } from '../invalidation/errors.js';
import { entryStaleIfUnreachableMs } from './routing.js';

export interface CacheCheckDeps {
  cache: TieredCache;
  isInvalidated: (entry: CacheEntry) => boolean;
  matchingBans: (entry: CacheEntry) => ActiveBan[];
  /** The cluster member owning a key (strong mode), or null. */
  ownerOf: (key: string) => string | null;
  /** The running configuration: the routes' windows for an origin that gives no answer. */
  config: () => Pick<Config, 'routes' | 'stale_if_unreachable'>;
  now: () => number;
}

/** What a plain GET does with the entry now, and the stale windows it has left, in whole seconds (rounded up). */
function outlookOf(entry: CacheEntry, deps: CacheCheckDeps, nowMs: number): Pick<CacheCheckVariant, 'state' | 'stale_while_revalidate_s' | 'stale_if_error_s' | 'stale_if_unreachable_s'> {
  const outlook = reuseOutlook(entry, nowMs, entryStaleIfUnreachableMs(deps.config(), entry.route));
  return {
    state: outlook.state,
    stale_while_revalidate_s: Math.ceil(outlook.staleWhileRevalidateLeftMs / 1000),
    stale_if_error_s: Math.ceil(outlook.staleIfErrorLeftMs / 1000),
    stale_if_unreachable_s: Math.ceil(outlook.staleIfUnreachableLeftMs / 1000),
  };
}

function describeVariant(entry: CacheEntry, tier: 'hot' | 'warm', deps: CacheCheckDeps, nowMs: number): CacheCheckVariant {
  const ageMs = currentAgeMs(entry, nowMs);
  return {
    ...outlookOf(entry, deps, nowMs),
    tier,
    variant_key: entry.variantKey,
    vary: [...entry.varyNames],
    status: entry.status,
    age_s: Math.floor(ageMs / 1000),
    freshness_remaining_s: Math.trunc((entry.freshnessLifetimeMs - ageMs) / 1000),
    forced_stale: entry.forcedStale,
    invalidated: deps.isInvalidated(entry),
    tags: [...entry.tags],
    bytes: entry.body.length,
  };
}

export function createCacheCheck(deps: CacheCheckDeps): CacheCheckProvider {
  return (url) => {
    const key = keyOfUrl(url);
    if (key === undefined) throw new InvalidUrlError(`not an absolute http(s) URL with a host: ${url}`);
    const nowMs = deps.now();
    // A look for an operator, not a use: it leaves every variant where it was in the LRU order.
    const hot = deps.cache.hot.peek(key);
    const warm = deps.cache.warm?.peek(key) ?? [];
    const variants = [
      ...hot.map((entry) => describeVariant(entry, 'hot', deps, nowMs)),
      ...warm.map((entry) => describeVariant(entry, 'warm', deps, nowMs)),
    ];
    // The variant a request without Vary-selecting fields gets, as the proxy would pick it.
    const plain = (entries: CacheEntry[]): CacheEntry | undefined =>
      entries.find((entry) => entry.variantKey === variantKey(entry.varyNames, NO_HEADERS) && !deps.isInvalidated(entry));
    const hotHit = plain(hot);
    const selected = hotHit ?? plain(warm);
    const source = hotHit ? 'hot' : selected ? 'warm' : null;
    const bans = new Map<string, ActiveBan>();
    const probes = [...hot, ...warm];
    if (probes.length === 0) probes.push(probeEntry(key));
    for (const entry of probes) for (const ban of deps.matchingBans(entry)) bans.set(ban.id, ban);
    const ageMs = selected ? currentAgeMs(selected, nowMs) : undefined;
    const outlook = selected ? outlookOf(selected, deps, nowMs) : undefined;
    return {
      url,
      key,
      hit: selected !== undefined,
      source,
      age_s: ageMs === undefined ? null : Math.floor(ageMs / 1000),
      freshness_remaining_s: selected && ageMs !== undefined ? Math.trunc((selected.freshnessLifetimeMs - ageMs) / 1000) : null,
      state: outlook?.state ?? null,
      stale_while_revalidate_s: outlook?.stale_while_revalidate_s ?? null,
      stale_if_error_s: outlook?.stale_if_error_s ?? null,
      stale_if_unreachable_s: outlook?.stale_if_unreachable_s ?? null,
      tags: selected ? [...selected.tags] : [],
      variants,
      matching_bans: [...bans.values()],
      owner: deps.ownerOf(key),
    };
  };
}

/** A stand-in entry for a URL svc holds nothing of, so host and path bans can still be matched. */
function probeEntry(key: string): CacheEntry {
  return {
    key,
    variantKey: '',
    varyNames: [],
    status: 200,
    headers: [],
    body: Buffer.alloc(0),
    requestTimeMs: 0,
    responseTimeMs: 0,
    correctedInitialAgeMs: 0,
    freshnessLifetimeMs: 0,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 0,
    mustRevalidate: false,
    noCache: false,
    etag: undefined,
    lastModified: undefined,
    surrogateControl: undefined,
    tags: [],
    forcedStale: false,
    route: '',
  };
}
