// The cluster's wire messages. Packets (the unreliable path) carry one protocol message (ping, ack,
// nack, ping-req) and piggybacked gossip (suspect, alive, dead, user); push-pull state travels on the
// reliable request path. Every packet and state starts with WIRE_VERSION.

/** Bumped on any incompatible change; a member drops input of any other version. */
export const WIRE_VERSION = 1;

/** Member states as the protocol knows them (SWIM plus memberlist's `left` for graceful leave). */
export type MemberState = 'alive' | 'suspect' | 'dead' | 'left';

/** Small string key/value map a member publishes about itself (mode, admin address, version...). */
export type Metadata = Readonly<Record<string, string>>;

export interface PingMessage {
  readonly kind: 'ping';
  readonly seq: number;
  /** The member the sender means to reach; a member with another name ignores the ping. */
  readonly target: string;
}

export interface AckMessage {
  readonly kind: 'ack';
  readonly seq: number;
}

/** Lifeguard: a ping-req helper's "I asked but heard nothing", so the requester can tell who is slow. */
export interface NackMessage {
  readonly kind: 'nack';
  readonly seq: number;
}

export interface PingReqMessage {
  readonly kind: 'ping-req';
  readonly seq: number;
  readonly target: string;
  readonly targetAddress: string;
  /** Whether the requester wants a nack when the target stays silent (off in plain SWIM). */
  readonly wantNack: boolean;
}

export interface SuspectMessage {
  readonly kind: 'suspect';
  readonly name: string;
  readonly incarnation: number;
  /** Who suspects; distinct accusers are Lifeguard's independent confirmations. */
  readonly from: string;
}

export interface AliveMessage {
  readonly kind: 'alive';
  readonly name: string;
  readonly address: string;
  readonly incarnation: number;
  readonly metadata: Metadata;
}

export interface DeadMessage {
  readonly kind: 'dead';
  readonly name: string;
  readonly incarnation: number;
  /** Who declares the death; a member declaring itself dead has left gracefully. */
  readonly from: string;
}

/** A consumer's broadcast, identified by its origin and the origin's sequence number for de-duplication. */
export interface UserMessage {
  readonly kind: 'user';
  readonly origin: string;
  readonly seq: number;
  readonly payload: Uint8Array;
}

export type ProtocolMessage = PingMessage | AckMessage | NackMessage | PingReqMessage;
export type GossipMessage = SuspectMessage | AliveMessage | DeadMessage | UserMessage;
export type ClusterMessage = ProtocolMessage | GossipMessage;

/** One member as a push-pull state carries it. */
export interface StateEntry {
  readonly name: string;
  readonly address: string;
  readonly state: MemberState;
  readonly incarnation: number;
  readonly metadata: Metadata;
  /**
   * For dead and left entries: how much longer the sender will remember the death (its tombstone),
   * so a receiver's memory of it never outlives the sender's and deaths cannot echo forever.
   */
  readonly rememberMs: number;
}

/** A user broadcast's identity in a push-pull digest. */
export interface BroadcastDigestEntry {
  readonly origin: string;
  readonly seq: number;
}

export interface PushPullState {
  /** Whether the sender is joining (push-pull on join) rather than on its periodic or reconnect round. */
  readonly join: boolean;
  readonly entries: readonly StateEntry[];
  /** Ids of the user broadcasts the sender holds for anti-entropy. */
  readonly broadcastDigest: readonly BroadcastDigestEntry[];
  /** Encoded user messages the receiver's digest lacked (answers only). */
  readonly broadcasts: readonly Uint8Array[];
  /** The consumer delegate's opaque state (empty when there is none). */
  readonly userState: Uint8Array;
}
