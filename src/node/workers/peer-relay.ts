// The primary's side of strong mode's peer fetch for its data-plane workers: the node's one cluster
// member lives here, so the workers learn the ring from it (a view sent on every change) and send
// their requests to peers through it (relayed-cluster-member.ts is the workers' side). Answering
// peers stays the primary's PeerFetcher, which forwards what it cannot answer from its tiers to the
// data plane, that is, to a worker.
import type { ClusterMember } from '../../../cluster/index.js';
import { PEER_FETCH_CHANNEL } from '../../clustering/peer-fetcher.js';
import { threadError, type ClusterView, type DownMessage, type UpMessage } from './thread-messages.js';

type PeerRequest = Extract<UpMessage, { kind: 'peer-request' }>;
type PeerReply = Extract<DownMessage, { kind: 'peer-reply' }>;

export class PeerRelay {
  constructor(
    private readonly member: Pick<ClusterMember, 'members' | 'ring' | 'request' | 'on'>,
    /** The primary's peer-fetch hop token (PeerRouting.hopToken). */
    private readonly hopToken: string,
  ) {}

  /** The cluster as the member sees it now. */
  view(): ClusterView {
    return { owners: [...this.member.ring.members], members: this.member.members().map((member) => ({ ...member, metadata: { ...member.metadata } })), hopToken: this.hopToken };
  }

  /** Calls `changed` with the new view whenever the ring or a member's state changes; returns the unsubscribe. */
  watch(changed: (view: ClusterView) => void): () => void {
    const events = ['ring', 'join', 'update', 'suspect', 'fail', 'leave'] as const;
    const stops = events.map((event) => this.member.on(event, () => changed(this.view())));
    return () => {
      for (const stop of stops) stop();
    };
  }

  /** Sends a worker's request to its peer and answers with what came back, or why nothing did. */
  async answer(request: PeerRequest): Promise<PeerReply> {
    // A worker asks peers for objects only: no other channel of the member is a worker's to use.
    if (request.channel !== PEER_FETCH_CHANNEL) return { kind: 'peer-reply', id: request.id, error: { code: 'refused', message: `channel ${request.channel} is not relayed` } };
    try {
      const body = await this.member.request(request.member, request.channel, request.body, { timeoutMs: request.timeoutMs });
      return { kind: 'peer-reply', id: request.id, body };
    } catch (error) {
      return { kind: 'peer-reply', id: request.id, error: threadError(error) };
    }
  }
}
