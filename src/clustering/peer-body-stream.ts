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

  /**
   * `first` is the part the answer carried; `askPart` fetches the part that starts at an offset.
   * `length`, the answer's Content-Length: the body ends with its last byte, whatever the owner's part
   * said, so no part is asked beyond it (an owner gone meanwhile cannot fail a body already whole).
   */
  constructor(
    private readonly askPart: (offset: number) => Promise<PeerFetchPart>,
    first: Uint8Array,
    more: boolean,
    private readonly length?: number,
  ) {
    super({ highWaterMark: PEER_FETCH_PART_BYTES });
    this.#offset = first.length;
    this.#more = more && !this.#whole();
    if (first.length > 0) this.push(asBuffer(first));
    if (!this.#more) this.push(null);
  }

  #whole(): boolean {
    return this.length !== undefined && this.#offset >= this.length;
  }

  override _read(): void {
    if (this.#asking || !this.#more) return;
    this.#asking = true;
    this.askPart(this.#offset).then(
      (part) => {
        this.#asking = false;
        if (this.destroyed) return;
        this.#offset += part.body.length;
        this.#more = part.more && !this.#whole();
        if (part.body.length > 0) this.push(asBuffer(part.body));
        if (!this.#more) this.push(null);
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
