// Lifeguard's local health awareness (Dadgar et al. 2017, section IV.A; memberlist awareness.go).
// A member that misses acks it should have had suspects itself of being slow, so it raises a score
// from 0 to max-1 and stretches its own probe interval and probe timeout by (score + 1): a struggling
// member probes less and waits longer before accusing others.

/** The score after applying `delta`, clamped to [0, maxMultiplier - 1]. */
export function nextAwarenessScore(score: number, delta: number, maxMultiplier: number): number {
  return Math.min(Math.max(0, score + delta), Math.max(0, maxMultiplier - 1));
}

/** `timeoutMs` stretched for the given awareness score. */
export function scaleByAwareness(timeoutMs: number, score: number): number {
  return timeoutMs * (score + 1);
}
