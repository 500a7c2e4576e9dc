// Finding what a request may be answered from: the stored variant it selects (RFC 9111 §4.1), unless
// an invalidation hides it (the lazy check of spec §1.1, which also deletes it) or the node may not
// serve it yet (a clustered node catching up). The cache flow looks up every request this way; peer
// fetch's owner side asks whether a key is stored fresh before it involves the data plane.
import type { CacheEntry } from '../cache/entry.js';
import type { CacheHit, TieredCache } from '../store/tiered-cache.js';
import type { HeaderLookup } from '../cache/policy/header-lookup.js';
import { requestDirectives } from '../cache/policy/request-directives.js';
import { decideReuse } from '../cache/policy/reuse.js';
import { variantKey } from '../cache/policy/vary.js';

export interface StoredLookupDeps {
  cache: TieredCache;
  now: () => number;
  /** The lazy invalidation check: true when a ban or purge newer than the entry hides it. */
  isInvalidated?: ((entry: CacheEntry) => boolean) | undefined;
  /** Whether a stored entry that no invalidation hides may be served now. */
  servable?: ((entry: CacheEntry) => boolean) | undefined;
}

/** The stored variant a request selects: the one whose Vary fields it matches. */
function variantForRequest(candidates: readonly CacheEntry[], requestHeaders: HeaderLookup): CacheEntry | undefined {
  for (const entry of candidates) if (entry.variantKey === variantKey(entry.varyNames, requestHeaders)) return entry;
  return undefined;
}

/** The stored entry a request for `key` with these fields may be answered from, if any. */
export function storedEntry(deps: StoredLookupDeps, key: string, requestHeaders: HeaderLookup): CacheHit | undefined {
  const hit = deps.cache.lookup(key, variantForRequest, requestHeaders);
  if (hit && deps.isInvalidated?.(hit.entry)) {
    deps.cache.delete(hit.entry.key, hit.entry.variantKey);
    return undefined;
  }
  if (hit && deps.servable?.(hit.entry) === false) return undefined;
  return hit;
}

/** The stored entry that answers a plain request for `key` right now as a HIT, or undefined. */
export function freshEntry(deps: StoredLookupDeps, key: string, requestHeaders: HeaderLookup): CacheEntry | undefined {
  const hit = storedEntry(deps, key, requestHeaders);
  if (!hit) return undefined;
  return decideReuse(requestDirectives(requestHeaders), hit.entry, deps.now()).action === 'fresh' ? hit.entry : undefined;
}
