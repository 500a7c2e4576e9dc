// Members reaped from the table are remembered for a while as tombstones: their last incarnation and how
// they ended. An alive message or a push-pull entry at or below that incarnation is stale news and is
// ignored, so a dead member cannot be revived by a peer that has not yet heard of the death (the
// weakness of memberlist, which forgets reaped members entirely). A member that really restarted learns
// of its death through push-pull and refutes it with a higher incarnation, which passes.
import type { MemberState } from '../codec/messages.js';

export interface Tombstone {
  readonly name: string;
  readonly incarnation: number;
  readonly state: MemberState;
  readonly expiresAtMs: number;
}

export class Tombstones {
  private readonly byName = new Map<string, Tombstone>();
  /** Names in the order their tombstones were written, for cheap expiry from the front. */
  private order: string[] = [];
  private head = 0;

  get size(): number {
    return this.byName.size;
  }

  /** The live tombstone of `name`, if any. */
  get(name: string, nowMs: number): Tombstone | undefined {
    const tombstone = this.byName.get(name);
    return tombstone !== undefined && tombstone.expiresAtMs > nowMs ? tombstone : undefined;
  }

  /** Records or extends a tombstone; an older incarnation never replaces a newer one. */
  record(tombstone: Tombstone): void {
    const existing = this.byName.get(tombstone.name);
    if (existing !== undefined) {
      if (existing.incarnation > tombstone.incarnation) return;
      if (existing.incarnation === tombstone.incarnation && existing.expiresAtMs >= tombstone.expiresAtMs) return;
    }
    this.byName.set(tombstone.name, tombstone);
    this.order.push(tombstone.name);
  }

  delete(name: string): void {
    this.byName.delete(name);
  }

  /** Forgets expired tombstones; amortised O(1) per tombstone written. */
  expire(nowMs: number): void {
    while (this.head < this.order.length) {
      const name = this.order[this.head] as string;
      const tombstone = this.byName.get(name);
      if (tombstone !== undefined && tombstone.expiresAtMs > nowMs) break;
      if (tombstone !== undefined) this.byName.delete(name);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  values(nowMs: number): Tombstone[] {
    const live: Tombstone[] = [];
    for (const tombstone of this.byName.values()) if (tombstone.expiresAtMs > nowMs) live.push(tombstone);
    return live;
  }
}
