// A transmit-limited broadcast queue after hashicorp/memberlist `TransmitLimitedQueue` (queue.go).
// Each message is handed out until it has been sent `transmitLimit()` times, least-transmitted first and,
// among messages never sent, newest first. A message queued under a key replaces the queued message with
// the same key (a newer alive/suspect/dead about one member makes the older one worthless). The queue is
// bounded: past `maxLength` the most-transmitted (oldest) messages are dropped and counted.
//
// Messages sit in one intrusive doubly linked list per transmit count, so queueing, superseding,
// handing out and dropping are O(1) per message; filling a packet never scans the whole queue once the
// packet is full.

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

class MessageList {
  head: QueuedMessage | null = null;
  tail: QueuedMessage | null = null;

  pushFront(item: QueuedMessage): void {
    item.prev = null;
    item.next = this.head;
    if (this.head !== null) this.head.prev = item;
    else this.tail = item;
    this.head = item;
  }

  pushBack(item: QueuedMessage): void {
    item.next = null;
    item.prev = this.tail;
    if (this.tail !== null) this.tail.next = item;
    else this.head = item;
    this.tail = item;
  }

  remove(item: QueuedMessage): void {
    if (item.prev !== null) item.prev.next = item.next;
    else this.head = item.next;
    if (item.next !== null) item.next.prev = item.prev;
    else this.tail = item.prev;
    item.prev = null;
    item.next = null;
  }
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
  private readonly lists: MessageList[] = [];
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

  private list(transmits: number): MessageList {
    while (this.lists.length <= transmits) this.lists.push(new MessageList());
    return this.lists[transmits] as MessageList;
  }

  private unlink(item: QueuedMessage): void {
    this.list(item.transmits).remove(item);
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
    this.list(0).pushFront(item);
    if (key !== undefined) this.byKey.set(key, item);
    this.count++;
    while (this.count > this.options.maxLength) this.dropOldest();
  }

  private dropOldest(): void {
    for (let t = this.lists.length - 1; t >= 0; t--) {
      const victim = (this.lists[t] as MessageList).tail;
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
    let used = 0;
    let misfits = 0;
    for (let t = 0; t < this.lists.length && maxBytes - used >= MIN_MESSAGE_BYTES; t++) {
      for (let item = (this.lists[t] as MessageList).head; item !== null; item = item.next) {
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
      this.list(item.transmits).remove(item);
      item.transmits++;
      if (item.transmits >= limit * item.transmitScale) {
        if (item.key !== undefined && this.byKey.get(item.key) === item) this.byKey.delete(item.key);
        this.count--;
        item.onDone?.();
      } else {
        this.list(item.transmits).pushBack(item);
      }
    }
    picked.length = 0;
    return used;
  }

  /** Removes every message (each one's `onDone` runs). */
  clear(): void {
    for (const list of this.lists) {
      while (list.head !== null) {
        const item = list.head;
        list.remove(item);
        item.onDone?.();
      }
    }
    this.byKey.clear();
    this.count = 0;
  }
}
