// What a node logs about cluster inputs it refused for want of authentication: a WARN at the first one
// (a misconfigured member, or someone probing the cluster port), then at most one a minute with the
// count, so a flood cannot flood the log. The metric svc_cluster_auth_rejected_total counts them all.
import type { RejectedPath } from '../../cluster/index.js';
import type { Logger } from '../observe/logger.js';

const LOG_INTERVAL_MS = 60_000;

export function rejectionLog(logger: Logger, now: () => number = Date.now): (path: RejectedPath, from: string) => void {
  let nextLogMs = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return (path, from) => {
    unlogged += 1;
    if (now() < nextLogMs) return;
    nextLogMs = now() + LOG_INTERVAL_MS;
    logger.warn(
      { path, from, refused: unlogged },
      'refused cluster input not sealed with this cluster\'s secret (a member with another cluster.secret, or a stranger)',
    );
    unlogged = 0;
  };
}
