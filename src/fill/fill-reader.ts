// One client reading a fill at its own pace. The reader keeps its own offset into the fill's body and
// writes to its socket until the socket pushes back; then it waits for `drain`, and a socket that
// accepts nothing for the write-idle timeout is cut, that client alone. A reader holds exactly two
// listeners (`drain` and `close`) for its whole life and at most one timer: nothing accumulates per
// chunk or per wait.
import { cutResponse, responseGone, type OutgoingResponse } from '../http/server-messages.js';
import type { FillBody } from './fill-body.js';

/** Why a fill cut a client off. */
export type CutReason = 'write_idle' | 'lag';

/** What a reader needs of its fill. */
export interface ReadableFill {
  readonly body: FillBody;
  /** The whole body has arrived. */
  readonly ended: boolean;
  /** The body failed or ended early: readers are cut, never ended cleanly. */
  readonly failed: boolean;
  readonly writeIdleTimeoutMs: number;
  /** A reader moved forward (the fill may read on or drop what nobody needs). */
  readerMoved(reader: FillReader): void;
  /** A reader is done, whichever way. */
  readerLeft(reader: FillReader, cut: CutReason | undefined): void;
}

type ReaderState = 'claimed' | 'streaming' | 'done';

/** The client a reader streams to: the data plane's exchange. */
export interface ReaderClient {
  readonly response: OutgoingResponse;
  /** Body bytes handed to the client's socket, added to as the reader writes. */
  bytesOut: number;
  /** The request was handed to the key's home thread: its cut is counted there, not here. */
  readonly handedOver: boolean;
}

export class FillReader {
  #state: ReaderState = 'claimed';
  #offset = 0;
  #exchange: ReaderClient | undefined;
  #response: OutgoingResponse | undefined;
  #blocked = false;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly fill: ReadableFill) {}

  /** Body bytes handed to the client's socket; 0 while the reader has not started. */
  get offset(): number {
    return this.#offset;
  }

  /** Still holds its place in the fill (claimed or streaming). */
  get active(): boolean {
    return this.#state !== 'done';
  }

  /** Streams the body to the exchange's client; its head must already be written. */
  stream(exchange: ReaderClient): void {
    if (this.#state !== 'claimed') return;
    const { response } = exchange;
    if (responseGone(response)) {
      this.#leave(undefined);
      return;
    }
    this.#state = 'streaming';
    this.#exchange = exchange;
    this.#response = response;
    response.on('drain', this.#onDrain);
    response.on('close', this.#onClose);
    this.pump();
  }

  /** Gives up the claim without reading (the client was answered otherwise). */
  release(): void {
    if (this.#state === 'claimed') this.#leave(undefined);
  }

  /** Writes what the fill holds beyond this reader's offset, until the socket pushes back. */
  pump(): void {
    if (this.#state !== 'streaming' || this.#blocked) return;
    const response = this.#response!;
    const { body } = this.fill;
    const start = this.#offset;
    for (;;) {
      if (this.fill.failed) {
        this.#cut(undefined);
        return;
      }
      const slice = body.sliceFrom(this.#offset);
      if (slice === undefined) {
        if (this.fill.ended) {
          response.end();
          this.#leave(undefined);
          return;
        }
        break;
      }
      this.#offset += slice.length;
      this.#exchange!.bytesOut += slice.length;
      if (!response.write(slice)) {
        this.#blocked = true;
        this.#idleTimer = setTimeout(this.#onIdle, this.fill.writeIdleTimeoutMs);
        break;
      }
    }
    if (this.#offset !== start) this.fill.readerMoved(this);
  }

  /** Cuts the client off (the fill failed, or the reader fell too far behind). */
  cut(reason: CutReason | undefined): void {
    if (this.#state === 'claimed') this.#leave(undefined);
    else if (this.#state === 'streaming') this.#cut(reason);
  }

  readonly #onDrain = (): void => {
    this.#blocked = false;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.pump();
  };

  /** The client went away (or the response ended, which #leave has already seen to). */
  readonly #onClose = (): void => {
    if (this.#state === 'streaming') this.#leave(undefined);
  };

  readonly #onIdle = (): void => {
    this.#idleTimer = undefined;
    this.#cut('write_idle');
  };

  #cut(reason: CutReason | undefined): void {
    if (this.#response !== undefined) cutResponse(this.#response);
    this.#leave(reason);
  }

  #leave(reason: CutReason | undefined): void {
    if (this.#state === 'done') return;
    this.#state = 'done';
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const response = this.#response;
    if (response) {
      response.off('drain', this.#onDrain);
      response.off('close', this.#onClose);
    }
    // A request a sibling thread handed over is that thread's fill reading, not a client: when its
    // client stops reading, the sibling cuts (and counts) the client, and this cut of the internal
    // connection that follows is not a second client cut.
    const counted = this.#exchange?.handedOver === true ? undefined : reason;
    this.#response = undefined;
    this.#exchange = undefined;
    this.fill.readerLeft(this, counted);
  }
}
