// Ids of invalidations already applied, so that one arriving by both paths (HTTP fan-out and gossip,
// spec §1.4 "dual path") is applied once. Bounded in count; an id is remembered long enough to outlive
// gossip's dissemination (seconds), and the oldest ids go first.

export class SeenIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  /** Records `id`; false when it was already recorded. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      // Sets iterate in insertion order: the first is the oldest.
      const oldest = this.ids.values().next().value as string;
      this.ids.delete(oldest);
    }
    return true;
  }

  get size(): number {
    return this.ids.size;
  }
}
