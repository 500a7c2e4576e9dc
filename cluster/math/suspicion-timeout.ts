// Lifeguard's dynamic suspicion timeout (Dadgar et al. 2017, section IV.B), as hashicorp/memberlist
// computes it in `suspicionTimeout` (util.go) and `remainingSuspicionTime` (suspicion.go).

/**
 * The shortest suspicion timeout for a cluster of `memberCount` members:
 * suspicionMult * max(1, log10(max(1, n))) * probeInterval. The floor of one log unit keeps small
 * clusters from timing out instantly (memberlist does the same).
 */
export function minSuspicionTimeoutMs(suspicionMult: number, memberCount: number, probeIntervalMs: number): number {
  const nodeScale = Math.max(1, Math.log10(Math.max(1, memberCount)));
  // Whole milliseconds, like memberlist's time.Duration arithmetic.
  return Math.floor(suspicionMult * nodeScale * probeIntervalMs);
}

/** The longest suspicion timeout: the one a suspicion starts with when confirmations are expected. */
export function maxSuspicionTimeoutMs(suspicionMaxTimeoutMult: number, minTimeoutMs: number): number {
  return suspicionMaxTimeoutMult * minTimeoutMs;
}

/**
 * How many independent confirmations a suspicion waits for before it reaches its minimum timeout:
 * suspicionMult - 2, or 0 when the cluster is too small to provide them (memberlist state.go).
 */
export function expectedSuspicionConfirmations(suspicionMult: number, memberCount: number): number {
  const expected = Math.max(0, suspicionMult - 2);
  return memberCount - 2 < expected ? 0 : expected;
}

/**
 * Time left on a suspicion after `confirmations` of `expectedConfirmations` independent members have
 * confirmed it and `elapsedMs` has passed since it started. The total timeout falls logarithmically
 * from max to min as confirmations arrive; the result is negative when the total is already over.
 */
export function remainingSuspicionTimeMs(
  confirmations: number,
  expectedConfirmations: number,
  elapsedMs: number,
  minTimeoutMs: number,
  maxTimeoutMs: number,
): number {
  if (expectedConfirmations < 1) return minTimeoutMs - elapsedMs;
  const fraction = Math.log(confirmations + 1) / Math.log(expectedConfirmations + 1);
  const raw = maxTimeoutMs - fraction * (maxTimeoutMs - minTimeoutMs);
  const timeoutMs = Math.max(minTimeoutMs, Math.floor(raw));
  return timeoutMs - elapsedMs;
}
