// The user broadcasts a member has seen recently, kept for anti-entropy: push-pull carries the ids of
// the recent ones (a digest) and the other side answers with the broadcasts missing from it, so a
// broadcast that gossip failed to bring (loss, a pause, a partition) still arrives, once, at the next
// push-pull. Bounded in count (oldest first) and in age (retentionMs). memberlist leaves this to a
// Delegate's LocalState/MergeRemoteState; svc needs it for invalidations, so it is built in.

/** Identifies a user broadcast: its origin and the origin's sequence number. */
export interface BroadcastId {
  readonly origin: string;
  readonly seq: number;
}

interface RecentBroadcast extends BroadcastId {
  /** The encoded user message, as gossip carries it. */
  readonly bytes: Uint8Array;
  readonly atMs: number;
}

export function broadcastKey(origin: string, seq: number): string {
  return `${seq}@${origin}`;
}

export class RecentBroadcasts {
  /** In arrival order, so expiry and eviction take from the front. */
  private readonly byKey = new Map<string, RecentBroadcast>();

  constructor(
    private readonly maxEntries: number,
    private readonly retentionMs: number,
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  add(origin: string, seq: number, bytes: Uint8Array, nowMs: number): void {
    const key = broadcastKey(origin, seq);
    if (this.byKey.has(key)) return;
    this.byKey.set(key, { origin, seq, bytes, atMs: nowMs });
    if (this.byKey.size > this.maxEntries) this.byKey.delete(this.byKey.keys().next().value as string);
  }

  expire(nowMs: number): void {
    for (const [key, entry] of this.byKey) {
      if (entry.atMs + this.retentionMs > nowMs) break;
      this.byKey.delete(key);
    }
  }

  /** The ids of every broadcast held. */
  digest(): BroadcastId[] {
    const ids: BroadcastId[] = [];
    for (const entry of this.byKey.values()) ids.push({ origin: entry.origin, seq: entry.seq });
    return ids;
  }

  /** The encoded broadcasts held here whose ids are not in `digest`. */
  missingFrom(digest: readonly BroadcastId[]): Uint8Array[] {
    if (this.byKey.size === 0) return [];
    const known = new Set<string>();
    for (const id of digest) known.add(broadcastKey(id.origin, id.seq));
    const missing: Uint8Array[] = [];
    for (const [key, entry] of this.byKey) if (!known.has(key)) missing.push(entry.bytes);
    return missing;
  }
}
