// Push-pull cost grows with the member count (each sync carries the whole table), so memberlist
// (util.go `pushPullScale`) stretches the interval above 32 members: the interval is multiplied by
// ceil(log2(n) - log2(32)) + 1. At 1,000 members the 30 s default becomes 180 s.

/** Member count up to which the push-pull interval is not stretched (memberlist pushPullScaleThreshold). */
export const PUSH_PULL_SCALE_THRESHOLD = 32;

export function scaledPushPullIntervalMs(intervalMs: number, memberCount: number): number {
  if (memberCount <= PUSH_PULL_SCALE_THRESHOLD) return intervalMs;
  const multiplier = Math.ceil(Math.log2(memberCount) - Math.log2(PUSH_PULL_SCALE_THRESHOLD)) + 1;
  return intervalMs * multiplier;
}
