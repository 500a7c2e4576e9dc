// Consistent-hash ownership of keys over the live members (ketama placement through the `hashring`
// package: 40 virtual nodes x 4 replicas = 160 points per member, md5).
//
// Which members own keys: alive and suspect ones. A suspect member keeps its keys until it is declared
// dead, because most suspicions are refuted within a few probe periods (Lifeguard makes false ones
// rare) and moving keys back and forth on every suspicion would cost more than briefly routing to a
// member that may be down. Dead and left members own nothing.
//
// The ring is rebuilt lazily: a membership change only bumps `version`; the first lookup after it
// rebuilds. During a join storm of 1,000 members nobody pays for 1,000 rebuilds nobody looks at.
import HashRing from 'hashring';
import { namesChecksum } from '../math/membership-checksum.js';

/** Virtual nodes per member on the ring (hashring's default, libketama's 40). */
export const DEFAULT_RING_VNODES = 40;

export interface RingView {
  /** The member name owning `key`, or undefined when no member is live. */
  owner(key: string): string | undefined;
  /** Up to `count` distinct member names for `key`, the owner first, then its successors. */
  owners(key: string, count: number): string[];
  /** Increases by one at every change of the live member set. */
  readonly version: number;
  /** Checksum of the sorted owner names: equal on members that agree on the ring. */
  readonly checksum: number;
  /** The owner names, sorted. */
  readonly members: readonly string[];
}

export class OwnershipRing implements RingView {
  private ringVersion = 0;
  private builtVersion = -1;
  private hashRing: HashRing | undefined;
  private names: string[] = [];
  private namesSum = 0;

  constructor(
    private readonly liveNames: () => string[],
    private readonly vnodes = DEFAULT_RING_VNODES,
  ) {}

  /** Records that the live set changed; the ring rebuilds on next use. */
  markChanged(): void {
    this.ringVersion++;
  }

  get version(): number {
    return this.ringVersion;
  }

  private current(): HashRing | undefined {
    if (this.builtVersion !== this.ringVersion) {
      this.names = this.liveNames().sort();
      this.namesSum = namesChecksum(this.names);
      this.hashRing = this.names.length > 0 ? new HashRing(this.names, 'md5', { 'vnode count': this.vnodes }) : undefined;
      this.builtVersion = this.ringVersion;
    }
    return this.hashRing;
  }

  get checksum(): number {
    this.current();
    return this.namesSum;
  }

  get members(): readonly string[] {
    this.current();
    return this.names;
  }

  owner(key: string): string | undefined {
    return this.current()?.get(key);
  }

  owners(key: string, count: number): string[] {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`owners count must be a positive integer, got ${count}`);
    const ring = this.current();
    return ring === undefined ? [] : ring.range(key, Math.min(count, this.names.length), true);
  }
}
