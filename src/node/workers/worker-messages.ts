// What the primary and its data-plane workers say to each other over the IPC channel node:cluster
// opens. Every message carries `svc` so that the primary and the workers can tell them from other
// messages on the same channel (prom-client's, Node's own internal ones are filtered by Node).
import type { MemberInfo } from '../../../cluster/index.js';

/** Primary → worker: run the handler of `kind` with `payload` and answer with the same id. */
export interface CallMessage {
  readonly svc: 'call';
  readonly id: number;
  readonly kind: string;
  readonly payload: unknown;
}

/** Worker → primary: the answer to call `id`; `error` is a sentence when the handler failed. */
export interface ReplyMessage {
  readonly svc: 'reply';
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

/**
 * Worker → primary: the worker listens to its channel; sent first, once. What the primary sends a
 * worker before it says so is held (worker-supervisor.ts), since Node drops a message that arrives
 * before the worker's code has attached its listener.
 */
export interface ListeningMessage {
  readonly svc: 'listening';
}

/** Worker → primary: the worker serves (its listener is open); sent once per worker. */
export interface ReadyMessage {
  readonly svc: 'ready';
}

/** Worker → primary: the worker could not start, and says why (`message`, one sentence); it exits. */
export interface FailedMessage {
  readonly svc: 'failed';
  readonly message: string;
}

/** Primary → worker: stop taking work, close, and exit. */
export interface StopMessage {
  readonly svc: 'stop';
}

/**
 * Worker → primary: a change to the warm tier the primary owns and writes (worker-warm-tier.ts):
 * - `put`: store the entry whose warm record (record-codec.ts) this is;
 * - `delete`: delete a variant, or every variant of the key;
 * - `use`: these variants were read (recency, for the eviction order);
 * - `verify`: a record of the key failed its check here; read the key, deleting what fails there.
 */
export type WarmWrite =
  | { readonly svc: 'warm'; readonly op: 'put'; readonly record: Uint8Array }
  | { readonly svc: 'warm'; readonly op: 'delete'; readonly key: string; readonly variantKey?: string | undefined }
  | { readonly svc: 'warm'; readonly op: 'use'; readonly variants: readonly (readonly [string, string])[] }
  | { readonly svc: 'warm'; readonly op: 'verify'; readonly key: string };

/**
 * Primary → worker: the shared warm tier is indexed and may be read (sent to every worker, and to
 * each forked later): until then a worker serves without it, as the primary does.
 */
export interface WarmJoinedMessage {
  readonly svc: 'warm-joined';
}

/**
 * Primary → worker: the node's cluster member has caught up with the invalidations made while it was
 * away (sent to every worker, and to each forked later). Until then a worker of a clustered node does
 * not serve what was fetched before it started, as a single process does (ClusterNode.servable).
 */
export interface CaughtUpMessage {
  readonly svc: 'caught-up';
}

/** What a worker knows of its node's cluster member (relayed-cluster-member.ts). */
export interface ClusterView {
  /** The names that own keys on the ring, as the member's ring has them. */
  readonly owners: readonly string[];
  /** Every member the node knows, with its state. */
  readonly members: readonly MemberInfo[];
  /**
   * The primary's peer-fetch hop token: a request its owner side forwards to the data plane, which a
   * worker then answers itself (peer-routing.ts).
   */
  readonly hopToken: string;
}

/** Primary → worker: the cluster as the node's member sees it now (strong mode); sent on every change. */
export interface ClusterViewMessage {
  readonly svc: 'cluster-view';
  readonly view: ClusterView;
}

/** Worker → primary: send this request to a peer through the node's member (strong mode's peer fetch). */
export interface PeerRequestMessage {
  readonly svc: 'peer-request';
  readonly id: number;
  readonly member: string;
  readonly channel: string;
  readonly body: Uint8Array;
  readonly timeoutMs: number;
}

/** Primary → worker: the peer's answer to request `id`, or why there is none (a transport error's code). */
export interface PeerReplyMessage {
  readonly svc: 'peer-reply';
  readonly id: number;
  readonly body?: Uint8Array;
  readonly error?: { readonly code: string | undefined; readonly message: string };
}

export type WorkerMessage =
  | CallMessage
  | ReplyMessage
  | ListeningMessage
  | ReadyMessage
  | FailedMessage
  | StopMessage
  | WarmWrite
  | WarmJoinedMessage
  | CaughtUpMessage
  | ClusterViewMessage
  | PeerRequestMessage
  | PeerReplyMessage;

const KINDS: ReadonlySet<unknown> = new Set(['call', 'reply', 'listening', 'ready', 'failed', 'stop', 'warm', 'warm-joined', 'caught-up', 'cluster-view', 'peer-request', 'peer-reply']);

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  if (typeof message !== 'object' || message === null) return false;
  return KINDS.has((message as { svc?: unknown }).svc);
}
