// Membership protocol settings. Defaults follow hashicorp/memberlist `DefaultLANConfig` (config.go),
// tuned there for a LAN with sub-millisecond latency; the SWIM and Lifeguard papers give the reasons.

export interface MembershipConfig {
  /** Time between failure-detection probes (SWIM protocol period T'). memberlist LAN: 1 s. */
  readonly probeIntervalMs: number;
  /** How long a direct ping waits for its ack before ping-req helpers are asked. memberlist LAN: 500 ms. */
  readonly probeTimeoutMs: number;
  /** Members asked to ping a silent target on our behalf (SWIM's k). memberlist LAN: 3. */
  readonly indirectChecks: number;
  /** Scales how often a gossip message is retransmitted: retransmitMult * ceil(log10(n+1)). memberlist LAN: 4. */
  readonly retransmitMult: number;
  /** Scales the suspicion timeout: suspicionMult * log10(n) * probeInterval. memberlist LAN: 4. */
  readonly suspicionMult: number;
  /** Lifeguard: a suspicion starts at this multiple of the minimum timeout. memberlist LAN: 6. */
  readonly suspicionMaxTimeoutMult: number;
  /** Full state sync with one random member (anti-entropy), stretched above 32 members. memberlist LAN: 30 s. */
  readonly pushPullIntervalMs: number;
  /** Upper bound on one push-pull exchange on the reliable path. memberlist TCPTimeout: 10 s. */
  readonly pushPullTimeoutMs: number;
  /** Time between gossip rounds that send queued messages to random members. memberlist LAN: 200 ms. */
  readonly gossipIntervalMs: number;
  /** Members each gossip round sends to. memberlist LAN: 3. */
  readonly gossipNodes: number;
  /** How long dead members still receive gossip (so they learn of their death) before being reaped. memberlist: 30 s. */
  readonly gossipToTheDeadTimeMs: number;
  /** Lifeguard: the largest factor local health awareness stretches probe interval and timeout by. memberlist: 8. */
  readonly awarenessMaxMultiplier: number;
  /**
   * How long a reaped member is remembered (tombstone) so an old alive message or an old push-pull
   * state cannot revive it. Not in memberlist, which forgets reaped members and so can be revived by a
   * stale full sync. 10 min spans three push-pull periods at 1,000 members (180 s each).
   */
  readonly tombstoneTimeMs: number;
  /** Switches Lifeguard on (default) or off for plain SWIM: fixed suspicion timeout, no awareness, no nacks. */
  readonly lifeguard: boolean;
  /** First delay before retrying a join when no seed answered; doubles per attempt. */
  readonly joinRetryInitialMs: number;
  /** Largest delay between join attempts. */
  readonly joinRetryMaxMs: number;
  /** Most membership messages queued for gossip; serf's MaxQueueDepth (memberlist itself has no bound). */
  readonly membershipQueueMaxLength: number;
  /** Most user broadcasts queued for gossip; same bound as serf's user event queue. */
  readonly userQueueMaxLength: number;
  /** Share of each packet's spare bytes reserved first for user broadcasts, so churn cannot starve them. */
  readonly userBroadcastShare: number;
  /** Most bytes of encoded metadata a member may publish. memberlist MetaMaxSize: 512. */
  readonly maxMetadataBytes: number;
  /** User broadcast ids remembered for de-duplication. */
  readonly seenBroadcastsMax: number;
  /**
   * How often a member tries a push-pull with one random failed (dead, not left) member, so two sides of
   * a healed partition find each other again: nothing else sends to a member declared dead once it is
   * past gossipToTheDeadTimeMs. serf's reconnect loop (ReconnectInterval 30 s); 10 s here bounds the
   * time to reconverge after a partition heals (docs/cluster.md, "Partitions and reconnect").
   */
  readonly reconnectIntervalMs: number;
  /** How long a failed member's address is kept for reconnect attempts. serf ReconnectTimeout: 24 h. */
  readonly reconnectTimeoutMs: number;
  /** Most failed members remembered for reconnect (the oldest are forgotten first). Ours: bounds memory. */
  readonly reconnectMaxMembers: number;
  /**
   * How long a user broadcast is kept for anti-entropy: push-pull exchanges a digest of the recent ones
   * and sends the other side what it missed. Covers one push-pull period at 1,000 members (180 s) with
   * margin, so a broadcast gossip failed to deliver still arrives. Ours (memberlist leaves it to a Delegate).
   */
  readonly userBroadcastRetentionMs: number;
  /** Most user broadcasts kept for anti-entropy (the oldest are forgotten first). */
  readonly userBroadcastRetentionMax: number;
}

export const DEFAULT_MEMBERSHIP_CONFIG: MembershipConfig = Object.freeze({
  probeIntervalMs: 1000,
  probeTimeoutMs: 500,
  indirectChecks: 3,
  retransmitMult: 4,
  suspicionMult: 4,
  suspicionMaxTimeoutMult: 6,
  pushPullIntervalMs: 30_000,
  pushPullTimeoutMs: 10_000,
  gossipIntervalMs: 200,
  gossipNodes: 3,
  gossipToTheDeadTimeMs: 30_000,
  awarenessMaxMultiplier: 8,
  tombstoneTimeMs: 600_000,
  lifeguard: true,
  joinRetryInitialMs: 1000,
  joinRetryMaxMs: 30_000,
  membershipQueueMaxLength: 4096,
  userQueueMaxLength: 4096,
  userBroadcastShare: 0.5,
  maxMetadataBytes: 512,
  seenBroadcastsMax: 16_384,
  reconnectIntervalMs: 10_000,
  reconnectTimeoutMs: 24 * 60 * 60 * 1000,
  reconnectMaxMembers: 1024,
  userBroadcastRetentionMs: 300_000,
  userBroadcastRetentionMax: 1024,
});

function requirePositive(config: MembershipConfig, key: keyof MembershipConfig): void {
  const value = config[key];
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`cluster config ${key} must be a positive number, got ${String(value)}`);
  }
}

/** Defaults overlaid with `overrides`, checked: a bad value throws here, at construction. */
export function resolveMembershipConfig(overrides: Partial<MembershipConfig> = {}): MembershipConfig {
  const config: MembershipConfig = { ...DEFAULT_MEMBERSHIP_CONFIG, ...overrides };
  for (const key of Object.keys(DEFAULT_MEMBERSHIP_CONFIG) as (keyof MembershipConfig)[]) {
    if (key !== 'lifeguard') requirePositive(config, key);
  }
  if (config.probeTimeoutMs >= config.probeIntervalMs) {
    throw new RangeError('cluster config probeTimeoutMs must be shorter than probeIntervalMs');
  }
  if (config.userBroadcastShare >= 1) throw new RangeError('cluster config userBroadcastShare must be below 1');
  return config;
}
