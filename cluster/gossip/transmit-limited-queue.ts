// A transmit-limited broadcast queue after hashicorp/memberlist `TransmitLimitedQueue` (queue.go).
// Each message is handed out until it has been sent `transmitLimit()` times, least-transmitted first and,
// among messages never sent, newest first. A message queued under a key replaces the queued message with
// the same key (a newer alive/suspect/dead about one member makes the older one worthless). The queue is
// bounded: past `maxLength` the most-transmitted (oldest) messages are dropped and counted.
//
// Messages sit in one intrusive doubly linked list per transmit count, so queueing, superseding,
// handing out and dropping are O(1) per message; filling a packet never scans the whole queue once the
// packet is full. The lists' heads and tails are two flat arrays indexed by transmit count, and a fill
// stops once it has seen every queued message: a queue of a few messages spread over dozens of transmit
// counts (a refutation is sent up to 48 times at 1,000 members) costs a few array reads, not a walk
// over dozens of list objects. Every gossip packet of every member fills here, so this is hot.

class QueuedMessage {
  prev: QueuedMessage | null = null;
  next: QueuedMessage | null = null;
  transmits = 0;
  /** The last packet (fill id) this message went into; a packet never carries a message twice. */
  packet = -1;

  constructor(
    readonly bytes: Uint8Array,
    readonly key: string | undefined,
    readonly onDone: (() => void) | undefined,
    /** Multiplies the queue's transmit limit for this message. */
    readonly transmitScale: number,
  ) {}
}

/** Smallest encoded message (kind byte, length byte, one body byte); below this a packet is full. */
const MIN_MESSAGE_BYTES = 3;

/**
 * Messages in a row that may be passed over for not fitting before a fill gives up. Without a cap a
 * nearly full packet would scan the whole queue (thousands of messages during a join storm) for one
 * small enough; passed-over messages keep their place and go out in the next packet.
 */
const MAX_CONSECUTIVE_MISFITS = 16;

export interface TransmitLimitedQueueOptions {
  /** Most messages held at once; beyond it the most-transmitted are dropped. */
  readonly maxLength: number;
  /** Current transmit limit, read on every fill since it follows the member count. */
  readonly transmitLimit: () => number;
}

export class TransmitLimitedQueue {
  /** First and last message of each transmit count's list (null when empty). */
  private readonly heads: (QueuedMessage | null)[] = [];
  private readonly tails: (QueuedMessage | null)[] = [];
  private readonly byKey = new Map<string, QueuedMessage>();
  private readonly picked: QueuedMessage[] = [];
  private count = 0;
  private dropCount = 0;

  constructor(private readonly options: TransmitLimitedQueueOptions) {
    if (!Number.isInteger(options.maxLength) || options.maxLength < 1) {
      throw new RangeError(`maxLength must be a positive integer, got ${options.maxLength}`);
    }
  }

  /** Messages waiting to be sent. */
  get length(): number {
    return this.count;
  }

  /** Messages dropped because the queue was full (superseded messages are not drops). */
  get drops(): number {
    return this.dropCount;
  }

  private pushFront(transmits: number, item: QueuedMessage): void {
    this.ensureList(transmits);
    const head = this.heads[transmits] as QueuedMessage | null;
    item.prev = null;
    item.next = head;
    if (head !== null) head.prev = item;
    else this.tails[transmits] = item;
    this.heads[transmits] = item;
  }

  private pushBack(transmits: number, item: QueuedMessage): void {
    this.ensureList(transmits);
    const tail = this.tails[transmits] as QueuedMessage | null;
    item.next = null;
    item.prev = tail;
    if (tail !== null) tail.next = item;
    else this.heads[transmits] = item;
    this.tails[transmits] = item;
  }

  private remove(item: QueuedMessage): void {
    const transmits = item.transmits;
    if (item.prev !== null) item.prev.next = item.next;
    else this.heads[transmits] = item.next;
    if (item.next !== null) item.next.prev = item.prev;
    else this.tails[transmits] = item.prev;
    item.prev = null;
    item.next = null;
  }

  private ensureList(transmits: number): void {
    while (this.heads.length <= transmits) {
      this.heads.push(null);
      this.tails.push(null);
    }
  }

  private unlink(item: QueuedMessage): void {
    this.remove(item);
    if (item.key !== undefined && this.byKey.get(item.key) === item) this.byKey.delete(item.key);
    this.count--;
  }

  /**
   * Queues an encoded message. With a `key`, any queued message under the same key is removed first.
   * `onDone` runs once the message has used up its transmits, been superseded, dropped or cleared.
   * `transmitScale` multiplies the transmit limit for this message (messages that must not be missed).
   */
  enqueue(bytes: Uint8Array, key?: string, onDone?: () => void, transmitScale = 1): void {
    if (key !== undefined) {
      const previous = this.byKey.get(key);
      if (previous !== undefined) {
        this.unlink(previous);
        previous.onDone?.();
      }
    }
    const item = new QueuedMessage(bytes, key, onDone, transmitScale);
    this.pushFront(0, item);
    if (key !== undefined) this.byKey.set(key, item);
    this.count++;
    while (this.count > this.options.maxLength) this.dropOldest();
  }

  private dropOldest(): void {
    for (let t = this.tails.length - 1; t >= 0; t--) {
      const victim = this.tails[t] as QueuedMessage | null;
      if (victim === null) continue;
      this.unlink(victim);
      this.dropCount++;
      victim.onDone?.();
      return;
    }
  }

  /**
   * Appends to `out` the messages to piggyback on one packet, using at most `maxBytes`, and counts one
   * transmit for each. Returns the bytes used. Callers that fill one packet in several calls pass the
   * same `packet` id to each, so a message handed out by an earlier call is not handed out again: a
   * copy in the same packet would spend a transmit and reach nobody new.
   */
  fill(maxBytes: number, out: Uint8Array[], packet = -1): number {
    if (this.count === 0 || maxBytes < MIN_MESSAGE_BYTES) return 0;
    const limit = Math.max(1, this.options.transmitLimit());
    const picked = this.picked;
    const heads = this.heads;
    const queued = this.count;
    let used = 0;
    let misfits = 0;
    let seen = 0;
    for (let t = 0; t < heads.length && seen < queued && maxBytes - used >= MIN_MESSAGE_BYTES; t++) {
      for (let item = heads[t] as QueuedMessage | null; item !== null; item = item.next) {
        seen++;
        if (packet >= 0 && item.packet === packet) continue;
        if (item.bytes.length > maxBytes - used) {
          if (++misfits >= MAX_CONSECUTIVE_MISFITS) break;
          continue;
        }
        misfits = 0;
        out.push(item.bytes);
        used += item.bytes.length;
        picked.push(item);
        if (maxBytes - used < MIN_MESSAGE_BYTES) break;
      }
      if (misfits >= MAX_CONSECUTIVE_MISFITS) break;
    }
    for (const item of picked) {
      item.packet = packet;
      this.remove(item);
      item.transmits++;
      if (item.transmits >= limit * item.transmitScale) {
        if (item.key !== undefined && this.byKey.get(item.key) === item) this.byKey.delete(item.key);
        this.count--;
        item.onDone?.();
      } else {
        this.pushBack(item.transmits, item);
      }
    }
    picked.length = 0;
    return used;
  }

  /** Removes every message (each one's `onDone` runs). */
  clear(): void {
    for (let t = 0; t < this.heads.length; t++) {
      for (let item = this.heads[t] as QueuedMessage | null; item !== null; item = this.heads[t] as QueuedMessage | null) {
        this.remove(item);
        item.onDone?.();
      }
    }
    this.byKey.clear();
    this.count = 0;
  }
}
