// Bounds of the admin API (spec §8 leaves them open; docs/admin-api.md documents these values).

/** 1 MiB: a batch of 1000 long URLs fits with room to spare; anything larger is not a sane request. */
export const ADMIN_BODY_MAX_BYTES = 1024 * 1024;

/** 1000 URLs per batch purge: bounds the work one request does; the CLI splits longer lists. */
export const PURGE_BATCH_MAX_URLS = 1000;

/** Bounds of `GET /debug/pprof/profile?seconds=N`: at least one sample window, at most a minute. */
export const CPU_PROFILE_MIN_SECONDS = 1;
export const CPU_PROFILE_MAX_SECONDS = 60;
/** 30 s, like Go's pprof default: long enough to catch a steady workload. */
export const CPU_PROFILE_DEFAULT_SECONDS = 30;
