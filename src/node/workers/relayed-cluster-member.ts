// A data-plane worker's view of its node's cluster member, for strong mode's peer fetch (the asking
// side; answering peers is the primary's). The node has one member, in the primary: a worker knows
// the ring and the members' states as the primary last told them (`cluster-view`, sent on every
// change), and sends its requests to peers through the primary, which holds the transport and its
// keys. So the worker routes a request exactly as the primary would, and a peer sees one node.
import { OwnershipRing, TransportError, type MemberInfo, type RequestOptions } from '../../../cluster/index.js';
import type { PeerFetchMember } from '../../clustering/peer-fetcher.js';
import type { RoutingMember } from '../../clustering/peer-routing.js';
import type { ClusterView } from './thread-messages.js';

/** Sends a request to a peer through the primary; resolves with the peer's answer. */
export type PeerRelay = (member: string, channel: string, body: Uint8Array, timeoutMs: number) => Promise<Uint8Array>;

type LosingEvent = 'suspect' | 'fail' | 'leave';
type Listener = (member: MemberInfo) => void;

/** Which event a member's new state calls for, if any (what the primary's member emits for it). */
const EVENT_OF_STATE: Partial<Record<MemberInfo['state'], LosingEvent>> = { suspect: 'suspect', dead: 'fail', left: 'leave' };

export class RelayedClusterMember implements PeerFetchMember, RoutingMember {
  readonly localMember: { readonly name: string };
  readonly ring: OwnershipRing;
  #owners: string[];
  #members = new Map<string, MemberInfo>();
  readonly #listeners = new Map<LosingEvent, Set<Listener>>();

  constructor(
    /** This node's name: until the primary's first view, the node owns every key, as a single process does before it joins. */
    name: string,
    private readonly relay: PeerRelay,
  ) {
    this.localMember = { name };
    this.#owners = [name];
    this.ring = new OwnershipRing(() => [...this.#owners]);
  }

  /** The primary's latest view: the ring's owners and every member's state. */
  update(view: ClusterView): void {
    const before = this.#members;
    this.#members = new Map(view.members.map((member) => [member.name, member]));
    this.#owners = [...view.owners];
    this.ring.markChanged();
    for (const member of view.members) {
      const event = EVENT_OF_STATE[member.state];
      if (event !== undefined && before.get(member.name)?.state !== member.state) this.#emit(event, member);
    }
    for (const [name, member] of before) if (!this.#members.has(name)) this.#emit('leave', member);
  }

  member(name: string): MemberInfo | undefined {
    return this.#members.get(name);
  }

  on(event: LosingEvent, listener: Listener): () => void {
    let listeners = this.#listeners.get(event);
    if (listeners === undefined) this.#listeners.set(event, (listeners = new Set()));
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** Fails as a transport request does: with code `timeout` past the deadline, and at once when aborted. */
  request(member: string, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(new TransportError('timeout', `the request to ${member} was given up`));
    return new Promise((resolve, reject) => {
      const giveUp = (): void => {
        clearTimeout(timer);
        reject(new TransportError('timeout', `the request to ${member} was given up`));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', giveUp);
        reject(new TransportError('timeout', `no answer from ${member} within ${timeoutMs} ms`));
      }, timeoutMs);
      signal?.addEventListener('abort', giveUp, { once: true });
      this.relay(member, channel, body, timeoutMs).then(
        (answer) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', giveUp);
          resolve(answer);
        },
        (error: unknown) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', giveUp);
          reject(error);
        },
      );
    });
  }

  handleRequest(): void {
    // Peers reach the node's member, in the primary: a worker answers no channel.
  }

  #emit(event: LosingEvent, member: MemberInfo): void {
    for (const listener of this.#listeners.get(event) ?? []) listener(member);
  }
}
