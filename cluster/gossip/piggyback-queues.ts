// Membership gossip and user broadcasts share each packet's spare bytes but not one queue. memberlist
// puts both behind one budget, so at scale a churn of alive/suspect/dead messages can starve user
// broadcasts. Here user broadcasts have their own queue and first claim on `userShare` of every packet's
// spare bytes; membership gossip takes what is left, and user broadcasts then fill any remainder. Neither
// side can starve the other: each is guaranteed its share whenever it has messages waiting.
import { TransmitLimitedQueue } from './transmit-limited-queue.js';

export interface PiggybackQueuesOptions {
  readonly membershipMaxLength: number;
  readonly userMaxLength: number;
  /** Share of a packet's spare bytes reserved first for user broadcasts, in (0, 1). */
  readonly userShare: number;
  readonly transmitLimit: () => number;
  /** Transmissions of a user broadcast; `transmitLimit` when not given. */
  readonly userTransmitLimit?: () => number;
}

export class PiggybackQueues {
  readonly membership: TransmitLimitedQueue;
  readonly user: TransmitLimitedQueue;
  /** Packets filled so far: each fill's id. */
  private packets = 0;

  constructor(private readonly options: PiggybackQueuesOptions) {
    if (!(options.userShare > 0 && options.userShare < 1)) {
      throw new RangeError(`userShare must be between 0 and 1, got ${options.userShare}`);
    }
    this.membership = new TransmitLimitedQueue({
      maxLength: options.membershipMaxLength,
      transmitLimit: options.transmitLimit,
    });
    this.user = new TransmitLimitedQueue({ maxLength: options.userMaxLength, transmitLimit: options.userTransmitLimit ?? options.transmitLimit });
  }

  get length(): number {
    return this.membership.length + this.user.length;
  }

  /** Messages dropped by either queue because it was full. */
  get drops(): number {
    return this.membership.drops + this.user.drops;
  }

  /** Appends messages for one packet to `out` within `maxBytes`; returns the bytes used. */
  fill(maxBytes: number, out: Uint8Array[]): number {
    if (this.membership.length === 0 && this.user.length === 0) return 0;
    // The user queue is filled twice for one packet; the packet id keeps the second fill from handing
    // out the messages of the first again (which would spend two transmits per packet on one copy).
    const packet = this.packets++;
    let used = this.user.fill(Math.floor(maxBytes * this.options.userShare), out, packet);
    used += this.membership.fill(maxBytes - used, out, packet);
    if (maxBytes - used > 0) used += this.user.fill(maxBytes - used, out, packet);
    return used;
  }

  clear(): void {
    this.membership.clear();
    this.user.clear();
  }
}
