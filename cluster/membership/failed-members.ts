// Addresses of members declared dead, kept after they are reaped so the reconnect loop can still try
// them (serf's failed-member list and reconnect, serf.go `reconnect`). Without it two halves of a healed
// partition never speak again: probes and gossip skip the dead, and push-pull only picks live members.
// Bounded in count (oldest forgotten first) and in time (reconnectTimeoutMs after the failure).
import type { Random } from '../random.js';
import type { Address } from '../transport.js';

export interface FailedMember {
  readonly name: string;
  readonly address: Address;
  readonly failedAtMs: number;
}

export class FailedMembers {
  /** In failure order: a member that fails again moves to the end. */
  private readonly byName = new Map<string, FailedMember>();

  constructor(
    private readonly maxMembers: number,
    private readonly timeoutMs: number,
  ) {}

  get size(): number {
    return this.byName.size;
  }

  record(name: string, address: Address, nowMs: number): void {
    this.byName.delete(name);
    this.byName.set(name, { name, address, failedAtMs: nowMs });
    if (this.byName.size > this.maxMembers) {
      const oldest = this.byName.keys().next().value as string;
      this.byName.delete(oldest);
    }
  }

  /** The member is alive again (or left for good): no more reconnect attempts. */
  forget(name: string): void {
    this.byName.delete(name);
  }

  /** Forgets members that failed reconnectTimeoutMs ago or earlier. */
  expire(nowMs: number): void {
    for (const member of this.byName.values()) {
      if (member.failedAtMs + this.timeoutMs > nowMs) break;
      this.byName.delete(member.name);
    }
  }

  /** The names of the failed members still remembered. */
  names(): IterableIterator<string> {
    return this.byName.keys();
  }

  /** One failed member chosen uniformly at random, if any. */
  pick(random: Random): FailedMember | undefined {
    if (this.byName.size === 0) return undefined;
    let index = random.int(this.byName.size);
    for (const member of this.byName.values()) if (index-- === 0) return member;
    return undefined;
  }
}
