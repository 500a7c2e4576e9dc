// The public API of the cluster library, exported from the package as `svc-edge-cache/cluster`.
export type { Clock, TimerHandle } from './clock.js';
export type { Random } from './random.js';
export type {
  Address,
  Broadcaster,
  BroadcastHandler as TransportBroadcastHandler,
  PacketHandler,
  RequestHandler,
  RequestOptions,
  Transport,
  TransportErrorCode,
} from './transport.js';
export { MalformedRequestError, PacketTooLargeError, TransportError } from './transport.js';
export { createRandom, randomSeed } from './seeded-random.js';
export { systemClock } from './system-clock.js';

export { ClusterMember, createClusterMember, DEFAULT_LEAVE_TIMEOUT_MS, MAX_NAME_BYTES } from './cluster-member.js';
export type { BroadcastHandler, ClusterCounters, ClusterEvents, ClusterMemberOptions } from './cluster-member.js';
export type { MemberInfo } from './membership/member-record.js';
export type { PushPullDelegate } from './membership/membership.js';
export type { MemberState, Metadata } from './codec/messages.js';
export { DEFAULT_MEMBERSHIP_CONFIG, resolveMembershipConfig } from './membership/config.js';
export type { MembershipConfig } from './membership/config.js';
export type { RingView } from './ring/ownership-ring.js';
export { DEFAULT_RING_VNODES, OwnershipRing } from './ring/ownership-ring.js';
export { fanOut, fanOutOutcomeOf } from './fanout.js';
export { LEASE_CHANNEL, LeaseKeeper, majorityOf } from './lease.js';
export type { LeaseMember, LeaseOptions } from './lease.js';
export type { FanOutOptions, FanOutOutcome, FanOutResult } from './fanout.js';
export {
  BroadcastTooLargeError,
  ClusterStoppedError,
  JoinAbortedError,
  MetadataTooLargeError,
  ReservedChannelError,
  UnknownMemberError,
} from './errors.js';
export { MalformedMessageError, UnsupportedWireVersionError } from './codec/errors.js';

// Authentication and encryption of a transport's traffic under a cluster secret.
export { sealTransport, SealedTransport, SEALED_PACKET_OVERHEAD_BYTES, UnauthenticatedRequestError } from './security/sealed-transport.js';
export type { RejectedPath, SealedTransportCounters, SealedTransportOptions } from './security/sealed-transport.js';
export { ClusterSecretError, MIN_SECRET_BYTES } from './security/cluster-keys.js';

// The protocol's math, as plain functions.
export {
  expectedSuspicionConfirmations,
  maxSuspicionTimeoutMs,
  minSuspicionTimeoutMs,
  remainingSuspicionTimeMs,
} from './math/suspicion-timeout.js';
export { retransmitLimit } from './math/retransmit-limit.js';
export { nextAwarenessScore, scaleByAwareness } from './math/awareness.js';
export { scaledPushPullIntervalMs } from './math/push-pull-scale.js';
export { membershipChecksum } from './math/membership-checksum.js';
