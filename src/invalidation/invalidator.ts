// The contract between the admin API (and later the cluster) and the invalidation engine: the four
// operations of spec §1 plus what the admin API and the dashboard show about them.
import type { CacheEntry } from '../cache/entry.js';

/** A ban predicate as the API receives it (spec §2.1); the given fields combine with AND. */
export interface BanSpec {
  host_regex?: string | undefined;
  path_regex?: string | undefined;
  surrogate_key?: string | undefined;
}

export type InvalidationType = 'purge' | 'purge_batch' | 'ban' | 'refresh';

/**
 * Where an invalidation was made, when it is applied on behalf of another node (or a restart): its
 * cluster-wide id and the time it takes effect from. Without it an operation is new, made here and now.
 */
export interface InvalidationOrigin {
  /** Cluster-wide id; a ban keeps it as its own, so a ban applied twice is kept once. */
  id: string;
  /** ms since the epoch: what was fetched at or before it is invalidated, what was fetched later is not. */
  atMs: number;
}

/** One entry of the bounded recent-invalidations list (newest first). */
export interface RecentInvalidation {
  type: InvalidationType;
  /** The URL, the URL count of a batch, or the ban predicate as `field=value` pairs. */
  argument: string;
  /** ISO 8601 UTC. */
  at: string;
  /** What the operation counted (see InvalidationResult.count). */
  count: number;
}

export interface InvalidationResult {
  /**
   * purge / refresh: stored variants removed or marked stale, across both tiers;
   * ban: hot-tier entries its eager eviction removed. The eviction walks the hot tier in slices that
   * yield to the event loop, and the ban answers once that walk is over; warm-tier matches are hidden
   * by the lazy check and not counted.
   */
  count: number;
  /**
   * In a strong-mode cluster, what the HTTP fan-out to the other nodes did, counted against every
   * member of the view when the operation was accepted: peers that confirmed they applied it, and the
   * rest (suspect, dead or silent: gossip and catch-up still bring it), with their names (capped).
   */
  peers?: { confirmed: number; missed: number; missedNames: string[] };
}

/** A purge or refresh of one URL. */
export interface UrlInvalidationResult extends InvalidationResult {
  /** The primary keys the URL names (its own scheme first, then the other one; see url-key.ts). */
  keys: string[];
}

export interface BatchResult extends InvalidationResult {
  /** URLs that were not absolute http(s) URLs with a host; the rest were purged. */
  failed: number;
}

export interface ActiveBan extends BanSpec {
  id: string;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC: when it is pruned (24 h after creation, spec §1.1). */
  expires_at: string;
  /** Hot-tier entries this ban's eager eviction removed on this node (so far, while it runs). */
  evicted: number;
  /** Lookups on this node that the lazy check answered as a miss because of this ban. */
  hidden: number;
}

/**
 * An invalidation as the engine received it, to be applied again by another holder of the node's
 * cache; `origin` goes with it, so that every holder dates it the same.
 */
export type ReplicatedInvalidation = { origin?: InvalidationOrigin | undefined } & (
  | { type: 'purge'; url: string }
  | { type: 'purge_batch'; urls: string[] }
  | { type: 'ban'; spec: BanSpec }
  | { type: 'refresh'; url: string }
);

/**
 * The other holders of a node's cache (its data-plane workers). Each operation is applied there
 * after the engine's own tiers and journal and before it answers; what they count joins the result
 * and the recent list.
 */
export interface InvalidationReplicas {
  /** Resolves with what the holders counted, once every one applied it (or was stopped). */
  apply(invalidation: ReplicatedInvalidation): Promise<number>;
}

export interface Invalidator {
  purge(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult>;
  purgeBatch(urls: readonly string[], origin?: InvalidationOrigin): Promise<BatchResult>;
  /**
   * Resolves once the ban is in effect for every lookup, journaled, and evicted from the hot tier.
   * Throws InvalidBanError (code `empty_ban` or `invalid_regex`) before changing anything. The bound
   * on active bans is not checked here (see InvalidationEngine.admitBan).
   */
  ban(spec: BanSpec, origin?: InvalidationOrigin): Promise<InvalidationResult>;
  refresh(url: string, origin?: InvalidationOrigin): Promise<UrlInvalidationResult>;
  /** The lazy check of spec §1.1: true when an invalidation newer than the entry's fetch hides it. */
  isInvalidated(entry: CacheEntry): boolean;
  /** Bans in force, oldest first. */
  activeBans(): ActiveBan[];
  /** Active bans whose predicate matches the entry, whatever its fetch time (for /v1/debug/cachecheck). */
  matchingBans(entry: CacheEntry): ActiveBan[];
  /** Newest first, bounded. */
  recent(): RecentInvalidation[];
  /** Operations applied since start, by type. */
  counts(): Record<InvalidationType, number>;
}
