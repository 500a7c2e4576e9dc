// What `GET /v1/cluster/peers` and `/v1/stats` show of the cluster (spec §2.5 leaves the fields open;
// docs/decisions.md records them).
import type { MemberInfo, RingView } from '../../cluster/index.js';
import type { Peer } from '../api/responses.js';
import type { ClusterMode } from './invalidation-delivery.js';

/** Keys sampled to estimate each member's share of the ring: enough for about ±1% per member. */
const SHARE_SAMPLES = 4096;

/** Each member's fraction of the key space, estimated by sampling fixed keys; cached per ring version. */
export class RingShares {
  private version = -1;
  private shares = new Map<string, number>();

  constructor(private readonly ring: RingView) {}

  of(name: string): number {
    if (this.version !== this.ring.version) {
      const counts = new Map<string, number>();
      for (let i = 0; i < SHARE_SAMPLES; i++) {
        const owner = this.ring.owner(`svc-share-probe-${i}`);
        if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);
      }
      this.shares = new Map([...counts].map(([member, count]) => [member, count / SHARE_SAMPLES]));
      this.version = this.ring.version;
    }
    return this.shares.get(name) ?? 0;
  }
}

export function peerView(member: MemberInfo, localMode: ClusterMode, shares: RingShares): Peer {
  const mode = member.metadata.mode === 'eventual' ? 'eventual' : 'strong';
  return {
    name: member.name,
    cluster_address: member.address,
    admin_address: member.metadata.admin ?? '',
    state: member.state,
    incarnation: member.incarnation,
    mode,
    version: member.metadata.version ?? '',
    ring_share: localMode === 'strong' ? shares.of(member.name) : null,
    mode_drift: member.metadata.mode !== localMode,
  };
}
