// How long the supervisor waits before it forks a worker again. A worker that dies soon after it
// started is likely to die the same way at once (a bad disk, a bug on a request that keeps coming
// back): each such death doubles the wait, up to a ceiling, so a crash loop costs a fork every
// `maxDelayMs` rather than spinning. A worker that stayed up for `stableAfterMs` starts the count over.

export interface RestartBackoff {
  /** Wait after the first quick death. */
  firstDelayMs: number;
  /** The longest wait: a worker that keeps dying is forked again this often. */
  maxDelayMs: number;
  /** A worker that ran this long before it died is restarted after firstDelayMs again. */
  stableAfterMs: number;
}

/** 100 ms lets a transient fault pass; 30 s bounds a crash loop to two forks a minute. */
export const DEFAULT_RESTART_BACKOFF: RestartBackoff = { firstDelayMs: 100, maxDelayMs: 30_000, stableAfterMs: 30_000 };

/**
 * The consecutive quick deaths after one more death of a worker that ran `ranMs`: reset to 1 when it
 * had been stable, else one more.
 */
export function quickDeathsAfter(previousQuickDeaths: number, ranMs: number, backoff: RestartBackoff): number {
  return ranMs >= backoff.stableAfterMs ? 1 : previousQuickDeaths + 1;
}

/** The wait before the next fork after `quickDeaths` (≥ 1) consecutive quick deaths. */
export function restartDelayMs(quickDeaths: number, backoff: RestartBackoff): number {
  const doublings = Math.min(Math.max(quickDeaths - 1, 0), 30);
  return Math.min(backoff.maxDelayMs, backoff.firstDelayMs * 2 ** doublings);
}
