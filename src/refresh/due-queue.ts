// The refreshes waiting to come due, earliest first: a binary min-heap of (due time, item). Items
// are never removed from the middle; a rescheduled item is pushed again and the caller ignores the
// outdated copy when it pops (lazy deletion), and rebuilds the heap when copies pile up.

interface Slot<T> {
  atMs: number;
  item: T;
}

export class DueQueue<T> {
  #heap: Slot<T>[] = [];

  get size(): number {
    return this.#heap.length;
  }

  push(item: T, atMs: number): void {
    const heap = this.#heap;
    heap.push({ atMs, item });
    let at = heap.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (heap[parent]!.atMs <= heap[at]!.atMs) break;
      [heap[parent], heap[at]] = [heap[at]!, heap[parent]!];
      at = parent;
    }
  }

  /** The earliest slot, left in place. */
  peek(): Readonly<Slot<T>> | undefined {
    return this.#heap[0];
  }

  /** Removes and answers the earliest slot. */
  pop(): Slot<T> | undefined {
    const heap = this.#heap;
    const first = heap[0];
    const last = heap.pop();
    if (first === undefined || last === undefined || heap.length === 0) return first;
    heap[0] = last;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let smallest = at;
      if (left < heap.length && heap[left]!.atMs < heap[smallest]!.atMs) smallest = left;
      if (right < heap.length && heap[right]!.atMs < heap[smallest]!.atMs) smallest = right;
      if (smallest === at) break;
      [heap[smallest], heap[at]] = [heap[at]!, heap[smallest]!];
      at = smallest;
    }
    return first;
  }

  /** Keeps only the slots `keep` accepts, in heap order again. */
  retain(keep: (item: T, atMs: number) => boolean): void {
    const kept = this.#heap.filter((slot) => keep(slot.item, slot.atMs));
    this.#heap = [];
    for (const slot of kept) this.push(slot.item, slot.atMs);
  }
}
