// Remembers which user broadcasts this member has already delivered, so a broadcast that arrives again
// through another gossip path is neither delivered twice nor re-queued. Bounded: past `maxEntries` the
// oldest ids are forgotten first (a broadcast's gossip lifetime is a few seconds, far shorter than the
// time it takes to cycle through the default capacity).

import { broadcastKey } from './recent-broadcasts.js';

export class SeenBroadcasts {
  private readonly seen = new Set<string>();

  constructor(private readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
    }
  }

  /** Records the id and returns true if it was new. */
  markSeen(origin: string, seq: number): boolean {
    const id = broadcastKey(origin, seq);
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    if (this.seen.size > this.maxEntries) {
      const oldest = this.seen.values().next().value as string;
      this.seen.delete(oldest);
    }
    return true;
  }
}
