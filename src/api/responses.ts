// Response bodies of the admin API (spec §2.2, §4.1), with the fields the spec leaves open (§2.5)
// decided here. The server builds them, the client checks what it receives against them, and
// docs/openapi.yaml describes the same shapes (test/api/openapi.test.ts holds the two together).
import * as v from 'valibot';

const count = v.pipe(v.number(), v.integer(), v.minValue(0));
/** ISO 8601 UTC timestamp. */
const timestamp = v.string();

/** Every failure: `{"error":{"code","message"}}` with a stable `code` per condition. */
export const errorResponseSchema = v.object({ error: v.object({ code: v.string(), message: v.string() }) });
export type ErrorResponse = v.InferOutput<typeof errorResponseSchema>;

/** The `status` strings of the write operations and of the auth check. */
export const STATUS = { purged: 'purged', banned: 'banned', refreshed: 'refreshed', ok: 'ok' } as const;

/**
 * In a strong-mode cluster, what the HTTP fan-out of an invalidation did (issues 16, 28), counted
 * against every member of the view when it was accepted: peers that confirmed they applied it, and the
 * rest (no answer within cluster.peer_timeout, suspect or dead; gossip and catch-up still bring it to
 * them), named in `peers_missed_names` (the first 16, sorted). Absent on a single node and in eventual mode.
 */
const fanOutFields = { peers_confirmed: v.optional(count), peers_missed: v.optional(count), peers_missed_names: v.optional(v.array(v.string())) };

/**
 * `count`: stored variants removed across both tiers, 0 when the URL matched nothing; `keys`: the
 * primary keys the URL names (its own scheme first, then the other scheme's copy), as the data plane
 * builds them, so an operator can compare them with `/v1/debug/cachecheck`.
 */
export const purgeResponseSchema = v.object({ status: v.literal(STATUS.purged), count, keys: v.array(v.string()), ...fanOutFields });
export type PurgeResponse = v.InferOutput<typeof purgeResponseSchema>;

/** `count`: stored variants removed across both tiers; `failed`: entries that were not valid URLs. */
export const purgeBatchResponseSchema = v.object({ status: v.literal(STATUS.purged), count, failed: count, ...fanOutFields });
export type PurgeBatchResponse = v.InferOutput<typeof purgeBatchResponseSchema>;

/** `count`: hot-tier entries the ban's eager eviction removed (the answer waits for that walk); warm-tier matches are hidden by the lazy check. */
export const banResponseSchema = v.object({ status: v.literal(STATUS.banned), count, ...fanOutFields });
export type BanResponse = v.InferOutput<typeof banResponseSchema>;

/** `count`: stored variants marked stale, 0 when the URL matched nothing; `keys` as for a purge. */
export const refreshResponseSchema = v.object({ status: v.literal(STATUS.refreshed), count, keys: v.array(v.string()), ...fanOutFields });
export type RefreshResponse = v.InferOutput<typeof refreshResponseSchema>;

export const authCheckResponseSchema = v.object({ status: v.literal(STATUS.ok) });
export type AuthCheckResponse = v.InferOutput<typeof authCheckResponseSchema>;

export const healthResponseSchema = v.object({ status: v.string() });
export type HealthResponse = v.InferOutput<typeof healthResponseSchema>;

export const readinessConditionSchema = v.object({ name: v.string(), ready: v.boolean(), reason: v.string(), since: timestamp });
export const readyResponseSchema = v.object({
  status: v.picklist(['ready', 'not_ready', 'draining', 'drained']),
  conditions: v.optional(v.array(readinessConditionSchema)),
});
export type ReadyResponse = v.InferOutput<typeof readyResponseSchema>;

export const versionResponseSchema = v.object({ version: v.string(), commit: v.string(), date: v.string() });
export type VersionResponse = v.InferOutput<typeof versionResponseSchema>;

/** An active ban as the API shows it; the predicate fields that were given, combined with AND. */
export const activeBanSchema = v.object({
  id: v.string(),
  host_regex: v.optional(v.string()),
  path_regex: v.optional(v.string()),
  surrogate_key: v.optional(v.string()),
  created_at: timestamp,
  /** When it is pruned: 24 hours after creation (spec §1.1). */
  expires_at: timestamp,
  /** Hot-tier entries its eager eviction removed on this node (so far, while it runs). */
  evicted: count,
  /** Lookups on this node the lazy check answered as a miss because of it. */
  hidden: count,
});
export type ActiveBanView = v.InferOutput<typeof activeBanSchema>;

const tierStatsSchema = v.object({ entries: count, bytes: count, max_bytes: count });
export type TierStats = v.InferOutput<typeof tierStatsSchema>;

/** What the node knows of the consistent-hash ring; null until the node is part of a cluster. */
const ringStatsSchema = v.object({
  mode: v.picklist(['strong', 'eventual']),
  members: count,
  /** Fraction of the key space this node owns, 0..1 (0 in eventual mode, which has no ownership). */
  own_share: v.number(),
  /** Membership checksum (DESIGN principle 8): equal on every node once membership has converged. */
  checksum: v.string(),
  /** Ring version: grows by one at each change of the live member set. */
  version: count,
  /** With `?url=`: the member owning that URL's key (strong mode); null otherwise. */
  owner: v.nullable(v.string()),
});

/** The part of `GET /v1/stats` the node's stores and cluster provide. */
export const nodeStatsSchema = v.object({
  tiers: v.object({ hot: tierStatsSchema, warm: v.nullable(tierStatsSchema) }),
  ring: v.nullable(ringStatsSchema),
});
export type NodeStats = v.InferOutput<typeof nodeStatsSchema>;

export const invalidationTypeSchema = v.picklist(['purge', 'purge_batch', 'ban', 'refresh']);

/** `GET /v1/stats`: the node's stats plus the invalidation engine's. */
export const statsResponseSchema = v.object({
  ...nodeStatsSchema.entries,
  bans: v.object({ active: count }),
  /** Operations applied since the node started, by type. */
  invalidations: v.object({ purge: count, purge_batch: count, ban: count, refresh: count }),
});
export type StatsResponse = v.InferOutput<typeof statsResponseSchema>;

/** `GET /v1/config`: the running configuration with every secret replaced by "[redacted]". */
export const configResponseSchema = v.record(v.string(), v.unknown());
export type ConfigResponse = v.InferOutput<typeof configResponseSchema>;

/** What a plain GET does with a stored response now (src/cache/policy/reuse-outlook.ts). */
const reuseStateSchema = v.picklist(['fresh', 'stale', 'expired', 'no_cache']);
/** Whole seconds left of a stale window, rounded up; 0 when none is left. */
const windowLeft = count;

const cacheCheckVariantSchema = v.object({
  tier: v.picklist(['hot', 'warm']),
  /** The Vary-selected request header values ('' when the response has no Vary). */
  variant_key: v.string(),
  vary: v.array(v.string()),
  status: v.pipe(v.number(), v.integer()),
  /** Current Age in whole seconds (RFC 9111 §4.2.3). */
  age_s: count,
  /** Freshness lifetime left in whole seconds; negative once stale. */
  freshness_remaining_s: v.pipe(v.number(), v.integer()),
  /** Set by refresh: stale whatever the freshness says. */
  forced_stale: v.boolean(),
  /**
   * fresh: served as HIT; stale: served as STALE while revalidated in the background; expired: the
   * origin is asked first; no_cache: stored with no-cache, validated before every use.
   */
  state: reuseStateSchema,
  /** Left of the stale-while-revalidate window (it starts at expiry). */
  stale_while_revalidate_s: windowLeft,
  /** Left of the window in which it is served STALE when the origin answers an error (stale-if-error). */
  stale_if_error_s: windowLeft,
  /** Left of the window in which it is served STALE when the origin cannot be reached (stale_if_unreachable). */
  stale_if_unreachable_s: windowLeft,
  /** True when an active ban or purge hides it (the lazy check): it will not be served. */
  invalidated: v.boolean(),
  tags: v.array(v.string()),
  bytes: count,
});
export type CacheCheckVariant = v.InferOutput<typeof cacheCheckVariantSchema>;

/**
 * `GET /v1/debug/cachecheck?url=`: how a plain GET of the URL (no Vary-selecting request headers)
 * would be answered. `hit`, `source`, `age_s`, `freshness_remaining_s` and `tags` describe the variant
 * such a request selects, null (or empty) on a miss; `variants` lists every stored variant of the key.
 */
export const cacheCheckResponseSchema = v.object({
  url: v.string(),
  key: v.string(),
  hit: v.boolean(),
  source: v.nullable(v.picklist(['hot', 'warm'])),
  age_s: v.nullable(count),
  freshness_remaining_s: v.nullable(v.pipe(v.number(), v.integer())),
  state: v.nullable(reuseStateSchema),
  stale_while_revalidate_s: v.nullable(windowLeft),
  stale_if_error_s: v.nullable(windowLeft),
  stale_if_unreachable_s: v.nullable(windowLeft),
  tags: v.array(v.string()),
  /** Every stored copy: one per variant and tier, so a variant held in both tiers is listed twice. */
  variants: v.array(cacheCheckVariantSchema),
  /** Active bans whose predicate matches this URL or one of its stored variants' tags. */
  matching_bans: v.array(activeBanSchema),
  /** The cluster member owning the URL's key in strong mode; null for a single node or eventual mode. */
  owner: v.nullable(v.string()),
});
export type CacheCheckResponse = v.InferOutput<typeof cacheCheckResponseSchema>;

export const recentInvalidationSchema = v.object({
  type: invalidationTypeSchema,
  /** The URL, the URL count of a batch, or the ban predicate as `field=value` pairs. */
  argument: v.string(),
  at: timestamp,
  count,
});

/** `GET /v1/invalidations/recent`: newest first, bounded by the invalidation engine. */
export const recentInvalidationsResponseSchema = v.object({ invalidations: v.array(recentInvalidationSchema) });
export type RecentInvalidationsResponse = v.InferOutput<typeof recentInvalidationsResponseSchema>;

/** One element of `GET /v1/cluster/peers` (spec §2.5 leaves the fields open; decided here). */
export const peerSchema = v.object({
  name: v.string(),
  cluster_address: v.string(),
  admin_address: v.string(),
  state: v.picklist(['alive', 'suspect', 'dead', 'left']),
  incarnation: count,
  mode: v.picklist(['strong', 'eventual']),
  version: v.string(),
  /** Fraction of the key space the peer owns, 0..1; null in eventual mode (no ring). */
  ring_share: v.nullable(v.number()),
  /** True when the peer runs another cluster.mode than this node: a configuration drift (spec §1.4). */
  mode_drift: v.boolean(),
});
export const peersResponseSchema = v.array(peerSchema);
export type Peer = v.InferOutput<typeof peerSchema>;

/**
 * `GET /v1/cdn/status` (spec §2.2), mounted only when the CDN is configured. `last_error` is svc's
 * sentence about the most recent CDN failure (spec §2.5 leaves its type open), kept after later
 * successes so that a lost purge stays visible; `last_error_at` and `pending` are additions.
 */
export const cdnStatusResponseSchema = v.object({
  /** Whether any invalidation is forwarded (at least one `cdn.propagate.*` is true). */
  enabled: v.boolean(),
  zone_id: v.string(),
  async: v.boolean(),
  last_error: v.nullable(v.string()),
  last_error_at: v.nullable(timestamp),
  /** Null until the CDN has confirmed a purge since the node started. */
  last_success_at: v.nullable(timestamp),
  /** Purges queued or under way, not yet confirmed by the CDN. */
  pending: count,
});
export type CdnStatusResponse = v.InferOutput<typeof cdnStatusResponseSchema>;

/**
 * One element of `GET /v1/bans`: an active ban with every field present (a predicate field null when
 * it was not given). `evicted` and `hidden` say what it matched on this node.
 */
export const banListEntrySchema = v.object({
  id: v.string(),
  host_regex: v.nullable(v.string()),
  path_regex: v.nullable(v.string()),
  surrogate_key: v.nullable(v.string()),
  created_at: timestamp,
  /** Whole seconds since creation, by the node's clock. */
  age_s: count,
  expires_at: timestamp,
  /** Hot-tier entries the ban's eager eviction removed (spec §1.1; grows while the ban lurker walks). */
  evicted: count,
  /** Lookups the ban has refused since (the lazy check). */
  hidden: count,
});
export type BanListEntry = v.InferOutput<typeof banListEntrySchema>;

/** `GET /v1/bans`: the active bans, newest first. */
export const bansResponseSchema = v.object({ bans: v.array(banListEntrySchema) });
export type BansResponse = v.InferOutput<typeof bansResponseSchema>;

/**
 * `POST /v1/reload`: the configuration file was read again; `changed` lists the key paths whose new
 * values now apply (`routes`, `admin.token`…), empty when the file changed nothing (`unchanged`).
 */
export const reloadResponseSchema = v.object({ status: v.picklist(['reloaded', 'unchanged']), changed: v.array(v.string()) });
export type ReloadResponse = v.InferOutput<typeof reloadResponseSchema>;

/** `POST /v1/undrain`: the node is in service again, or was already (undrain is idempotent). */
export const undrainResponseSchema = v.object({ status: v.literal('serving') });
export type UndrainResponse = v.InferOutput<typeof undrainResponseSchema>;
