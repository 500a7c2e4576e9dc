// Where a strong-mode request goes (spec §1.4): to the owner of its key, or answered here. The owner
// is asked only while it is alive: a suspect owner (probably paused or dead) is skipped for the origin,
// a request waiting on an owner that becomes suspect, dead or leaves is cut loose at once, and no wait
// on an owner lasts longer than the peer timeout. A client cannot choose the route: the header that
// marks a request an owner forwards to its own data plane carries a secret of this process.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { MemberInfo } from '../../cluster/index.js';
import type { Route } from '../proxy/cache-flow.js';

/**
 * Marks a request an owner forwards to its own data plane (peer fetch), which must then answer it
 * itself. Its value is this process's hop token; the same header from a client is ignored, and it is
 * never sent to an origin.
 */
export const PEER_HOP_HEADER = 'x-svc-peer-hop';

export interface RoutingMember {
  readonly localMember: { readonly name: string };
  readonly ring: { owner(key: string): string | undefined };
  member(name: string): MemberInfo | undefined;
  on(event: 'suspect' | 'fail' | 'leave', listener: (member: MemberInfo) => void): () => void;
}

export class PeerRouting {
  private readonly hopTokenBytes: Buffer;
  /** Requests waiting on each owner, to be cut loose when it fails. */
  private readonly waiting = new Map<string, Set<AbortController>>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly member: RoutingMember,
    /** Longest wait on an owner (`cluster.peer_timeout`). */
    readonly timeoutMs: number,
    /**
     * 128 random bits, fresh for each node; a data-plane worker takes its primary's, since its
     * primary's owner side forwards to the workers.
     */
    readonly hopToken: string = randomBytes(16).toString('hex'),
  ) {
    this.hopTokenBytes = Buffer.from(hopToken);
    for (const event of ['suspect', 'fail', 'leave'] as const) {
      this.unsubscribe.push(member.on(event, (failing) => this.cutLoose(failing.name)));
    }
  }

  /** Whether `value` (a request's PEER_HOP_HEADER) is this process's token: an owner's own forward. */
  isOwnHop(value: string | string[] | undefined): boolean {
    if (typeof value !== 'string' || value.length !== this.hopToken.length) return false;
    return timingSafeEqual(Buffer.from(value), this.hopTokenBytes);
  }

  /** Where the request for `key` goes; `hopHeader` is its PEER_HOP_HEADER, if any. */
  route(key: string, hopHeader: string | string[] | undefined): Route {
    if (this.isOwnHop(hopHeader)) return { kind: 'here' };
    const owner = this.member.ring.owner(key);
    if (owner === undefined || owner === this.member.localMember.name) return { kind: 'here' };
    if (this.member.member(owner)?.state !== 'alive') return { kind: 'origin', reason: 'owner_suspect' };
    return { kind: 'owner', owner };
  }

  /**
   * A signal for one wait on `owner`: it aborts when the owner becomes suspect, dead or leaves. Call
   * `done` when the wait is over.
   */
  watch(owner: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    let set = this.waiting.get(owner);
    if (set === undefined) this.waiting.set(owner, (set = new Set()));
    set.add(controller);
    return {
      signal: controller.signal,
      done: () => {
        set.delete(controller);
        if (set.size === 0 && this.waiting.get(owner) === set) this.waiting.delete(owner);
      },
    };
  }

  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    for (const name of [...this.waiting.keys()]) this.cutLoose(name);
  }

  private cutLoose(name: string): void {
    const set = this.waiting.get(name);
    if (set === undefined) return;
    this.waiting.delete(name);
    for (const controller of set) controller.abort(new Error(`the owner ${name} is no longer alive`));
  }
}
