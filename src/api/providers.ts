// What the admin API asks of the node for its read endpoints; the node implements these from its
// stores and cluster, so the API layer never reaches into them.
import type { CacheCheckResponse, NodeStats } from './responses.js';

/**
 * The store and ring part of `GET /v1/stats`; the API adds the invalidation figures itself. `url`
 * (already validated) asks for the ring owner of that URL.
 */
export type NodeStatsProvider = (url?: string) => NodeStats | Promise<NodeStats>;

/** `GET /v1/debug/cachecheck`: called with an already validated absolute http(s) URL. */
export type CacheCheckProvider = (url: string) => CacheCheckResponse | Promise<CacheCheckResponse>;
