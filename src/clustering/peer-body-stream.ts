// The asking node's side of a body sent in parts (peer-fetch-wire.ts): a Readable that asks for the next
// part only when its reader wants more, one part in flight at a time. The fill reading it paces it, so a
// body larger than memory crosses from the owner with one part held on each side.
import { Readable } from 'node:stream';
import { PEER_FETCH_PART_BYTES, type PeerFetchPart } from './peer-fetch-wire.js';

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class PeerBodyStream extends Readable {
  #offset: number;
  #asking = false;
  #more: boolean;

  /** `first` is the part the answer carried; `askPart` fetches the part that starts at an offset. */
  constructor(
    private readonly askPart: (offset: number) => Promise<PeerFetchPart>,
    first: Uint8Array,
    more: boolean,
  ) {
    super({ highWaterMark: PEER_FETCH_PART_BYTES });
    this.#offset = first.length;
    this.#more = more;
    if (first.length > 0) this.push(asBuffer(first));
    if (!more) this.push(null);
  }

  override _read(): void {
    if (this.#asking || !this.#more) return;
    this.#asking = true;
    this.askPart(this.#offset).then(
      (part) => {
        this.#asking = false;
        if (this.destroyed) return;
        this.#offset += part.body.length;
        this.#more = part.more;
        if (part.body.length > 0) this.push(asBuffer(part.body));
        if (!part.more) this.push(null);
        // An empty part: nothing arrived at the owner in time. Ask again; the owner's own timeouts end
        // a stream whose origin went quiet for good.
        else if (part.body.length === 0) this._read();
      },
      (error: unknown) => {
        this.#asking = false;
        this.destroy(error instanceof Error ? error : new Error(String(error)));
      },
    );
  }
}
