// The owner side of a body sent in parts (peer-fetch-wire.ts): the streams open for asking nodes, each
// reading its source one part at a time, only when the asker asks for it. A stream holds at most one
// part in memory; one the asker stops asking for is closed after the idle time, and the number of
// streams is bounded, so peers cannot make the owner hold more than that.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { PeerFetchPart } from './peer-fetch-wire.js';

/** Where an open stream's bytes come from. */
export interface PartSource {
  /** The next bytes, about `maxBytes` (a source may round up to a whole chunk), and whether more follow. */
  next(maxBytes: number): Promise<PeerFetchPart>;
  close(): void;
}

/** A stored body, sent as views into it: nothing is copied until the part is framed. */
export function bufferSource(body: Uint8Array, from: number): PartSource {
  let offset = from;
  return {
    next(maxBytes) {
      const end = Math.min(body.length, offset + maxBytes);
      const part = body.subarray(offset, end);
      offset = end;
      return Promise.resolve({ body: part, more: end < body.length });
    },
    close() {
      offset = body.length;
    },
  };
}

/**
 * A body still arriving (the owner's own data plane answering a miss), read only when a part is asked
 * for. A part is what has arrived by then, up to about `maxBytes`: it waits for the first chunk at most
 * `waitMs`, and answers an empty part meanwhile, so a slow origin never makes a part outlast the
 * peer-fetch timeout (the asker asks again at once).
 *
 * `length`, the body's announced Content-Length: the part that reaches it is the last, even when the
 * stream has not said so yet. Its end arrives a moment after its last bytes; a part that said "more"
 * then would cost the asker a round trip for an empty part, and keep its client's response open on an
 * owner that may be gone by then.
 */
export function readableSource(body: Readable, waitMs: number, length?: number): PartSource {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  /** A chunk asked for that has not arrived yet: the next part takes it. */
  let pending: Promise<IteratorResult<Buffer>> | undefined;
  let leftover: Buffer | undefined;
  let done = length === 0;
  /** Bytes taken from the body so far, a leftover included. */
  let taken = 0;
  const step = (): Promise<IteratorResult<Buffer>> => {
    const next = pending ?? chunks.next();
    pending = next;
    return next.then((result) => {
      pending = undefined;
      return result;
    });
  };
  const take = (result: IteratorResult<Buffer>, parts: Buffer[]): number => {
    if (result.done) {
      done = true;
      return 0;
    }
    parts.push(result.value);
    taken += result.value.length;
    if (length !== undefined && taken >= length) done = true;
    return result.value.length;
  };
  return {
    async next(maxBytes) {
      const parts: Buffer[] = leftover ? [leftover] : [];
      let size = leftover?.length ?? 0;
      leftover = undefined;
      if (size === 0 && !done) {
        let timer: NodeJS.Timeout | undefined;
        const arriving = step();
        // If the wait ends first, the next part takes this chunk (or its failure) instead.
        arriving.catch(() => undefined);
        const first = await Promise.race([arriving, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)))]);
        clearTimeout(timer);
        if (first === undefined) return { body: new Uint8Array(0), more: true };
        size += take(first, parts);
      }
      // Then whatever has arrived already, without waiting for more.
      while (!done && size < maxBytes && body.readableLength > 0) size += take(await step(), parts);
      const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
      if (joined.length > maxBytes) leftover = joined.subarray(maxBytes);
      const part = leftover ? joined.subarray(0, maxBytes) : joined;
      return { body: part, more: !done || leftover !== undefined };
    },
    close() {
      done = true;
      body.destroy();
    },
  };
}

/** The part asked for cannot be sent: the stream is unknown (closed, expired) or the offset is not its next one. */
export class UnknownPeerStreamError extends Error {
  override readonly name = 'UnknownPeerStreamError';
  readonly code = 'unknown_peer_stream';
}

interface Stream {
  source: PartSource;
  /** Offset of the next part. */
  offset: number;
  /** A part is being read: the next request must wait for its answer. */
  busy: boolean;
  timer: NodeJS.Timeout;
}

export interface PeerFetchStreamsOptions {
  /** Streams open at most; past it a new body is not offered in parts (see PeerFetcher). */
  maxStreams: number;
  /** A stream nobody asked a part of for this long is closed. */
  idleMs: number;
  partBytes: number;
}

export class PeerFetchStreams {
  readonly #streams = new Map<string, Stream>();

  constructor(private readonly options: PeerFetchStreamsOptions) {}

  /** Opens a stream over `source` whose next part starts at `offset`; its id, or undefined when full. */
  open(source: PartSource, offset: number): string | undefined {
    if (this.#streams.size >= this.options.maxStreams) return undefined;
    const id = randomUUID();
    const timer = setTimeout(() => this.#close(id), this.options.idleMs);
    // An abandoned stream is a resource matter, never a reason to keep the process alive.
    timer.unref();
    this.#streams.set(id, { source, offset, busy: false, timer });
    return id;
  }

  async part(id: string, offset: number): Promise<PeerFetchPart> {
    const stream = this.#streams.get(id);
    if (stream === undefined || stream.busy || stream.offset !== offset) throw new UnknownPeerStreamError(`no stream ${id} at offset ${offset}`);
    stream.busy = true;
    stream.timer.refresh();
    try {
      const part = await stream.source.next(this.options.partBytes);
      stream.offset += part.body.length;
      if (!part.more) this.#close(id);
      return part;
    } catch (error) {
      this.#close(id);
      throw error;
    } finally {
      stream.busy = false;
    }
  }

  /** Closes every stream (the node is stopping). */
  closeAll(): void {
    for (const id of [...this.#streams.keys()]) this.#close(id);
  }

  #close(id: string): void {
    const stream = this.#streams.get(id);
    if (stream === undefined) return;
    this.#streams.delete(id);
    clearTimeout(stream.timer);
    stream.source.close();
  }
}
