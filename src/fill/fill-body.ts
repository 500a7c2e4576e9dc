// The bytes a fill has received, addressed by absolute offset so that every reader keeps one number of
// its own. A body whose length is known and that will be stored is copied once into one buffer of that
// length, which becomes the entry's body (no second copy at the end); any other body is kept as the
// chunks it arrived in, shared by every reader and never copied, and the chunks no reader needs any
// more are dropped once the fill stops keeping the whole body.

export class FillBody {
  /** The one buffer of a body of known length, filled up to #length; undefined for a chunked body. */
  #whole: Buffer | undefined;
  readonly #chunks: Buffer[] = [];
  /** Absolute offset of each chunk's first byte. */
  readonly #starts: number[] = [];
  /** Offset of the first byte still held. */
  #base = 0;
  #length = 0;

  /** Bytes received so far: the offset one past the last byte. */
  get length(): number {
    return this.#length;
  }

  /** Offset of the first byte still held; 0 while the whole body is kept. */
  get base(): number {
    return this.#base;
  }

  /** Receives a body of `bytes` into one buffer of that size, before anything arrived. */
  reserve(bytes: number): void {
    if (this.#length === 0 && this.#chunks.length === 0) this.#whole = Buffer.allocUnsafe(bytes);
  }

  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const whole = this.#whole;
    if (whole !== undefined) {
      if (this.#length + chunk.length <= whole.length) {
        chunk.copy(whole, this.#length);
        this.#length += chunk.length;
        return;
      }
      // More than announced (the fill fails such a body): what arrived becomes chunks again.
      this.#whole = undefined;
      this.#chunks.push(whole.subarray(0, this.#length));
      this.#starts.push(0);
    }
    this.#chunks.push(chunk);
    this.#starts.push(this.#length);
    this.#length += chunk.length;
  }

  /**
   * The held bytes from `offset` to the end of the chunk holding it (a view, never a copy), or
   * undefined when `offset` is the end of what was received. `offset` must not be below `base`.
   */
  sliceFrom(offset: number): Buffer | undefined {
    if (offset >= this.#length) return undefined;
    if (this.#whole !== undefined) return this.#whole.subarray(offset, this.#length);
    const at = this.#chunkAt(offset);
    const chunk = this.#chunks[at]!;
    const inner = offset - this.#starts[at]!;
    return inner === 0 ? chunk : chunk.subarray(inner);
  }

  /** Drops the chunks that end at or before `offset`. */
  dropBefore(offset: number): void {
    if (this.#whole !== undefined) return;
    let drop = 0;
    while (drop < this.#chunks.length && this.#starts[drop]! + this.#chunks[drop]!.length <= offset) drop += 1;
    if (drop === 0) return;
    this.#chunks.splice(0, drop);
    this.#starts.splice(0, drop);
    this.#base = this.#chunks.length === 0 ? this.#length : this.#starts[0]!;
  }

  /**
   * The whole body as one Buffer, which then replaces the chunks (so readers still streaming read
   * from it and the chunks can be collected). Only while the whole body is held.
   */
  joined(): Buffer {
    if (this.#base !== 0) throw new Error('FillBody.joined() after bytes were dropped');
    if (this.#whole !== undefined) return this.#whole.length === this.#length ? this.#whole : this.#whole.subarray(0, this.#length);
    const whole = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#length);
    this.#chunks.length = 0;
    this.#starts.length = 0;
    this.#length = 0;
    this.append(whole);
    return whole;
  }

  /** Binary search: the index of the chunk that holds `offset`. */
  #chunkAt(offset: number): number {
    let low = 0;
    let high = this.#starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.#starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}
