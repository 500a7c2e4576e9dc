// A fill: the busy object of one miss (DESIGN principle 12; Varnish `cache_hash.c` busy objects, undici
// `deduplication-handler.js`). It reads one answer from its source (the origin, or a peer) at the
// source's pace and keeps the body for every client that reads it, each at its own pace. Its state goes
// busy → complete | failed | pass exactly once:
//   - complete: the whole body arrived; it was stored if the store gate allowed it;
//   - failed: the source failed before the head, or the body failed or ended early; nothing is stored;
//   - pass: the answer is not stored (not storable, or larger than max_object_bytes); its readers still
//     get it, and the fill then keeps only a window of the body, reading on as its fastest reader does.
// A fill keeps at most max_object_bytes (plus one chunk) in memory, whatever the body's size.
import type { Readable } from 'node:stream';
import type { CacheEntry } from '../cache/entry.js';
import type { StoreGate } from '../invalidation/invalidation-sequence.js';
import type { PutOutcome } from '../store/cache-store.js';
import type { CacheResult, Source } from '../observe/metrics.js';
import { FillBody } from './fill-body.js';
import { FillReader, type CutReason, type ReadableFill } from './fill-reader.js';
import type { FillCounters } from './fill-counters.js';

export type FillState = 'busy' | 'complete' | 'failed' | 'pass';

/** What readers learn of an answer with a body. */
export interface AnswerHead {
  status: number;
  /**
   * The fields to send the client whose request opened the fill, without Age and X-Cache: all the
   * origin forwarded, the fields a qualified private or no-cache names included.
   */
  fields: string[];
  /**
   * The fields to send every other reader, when they differ: what the stored copy holds (RFC 9111
   * §5.2.2.4, §5.2.2.7; docs/http-caching.md, "Set-Cookie").
   */
  sharedFields?: readonly string[] | undefined;
  /** Other requests may read this answer: it is storable (even if too large to store). */
  shareable: boolean;
  /** The secondary key of the answer (RFC 9111 §4.1) and the request fields it depends on. */
  varyNames: readonly string[];
  variantKey: string;
  /** `Vary: *`: no other request may be given this answer. */
  varyStar: boolean;
  /** Surrogate keys, for the store gate's ban check of a joining request. */
  tags: readonly string[];
  etag: string | undefined;
  lastModified: string | undefined;
  /** RFC 9111 §4.2.3 inputs, for the Age of a client that joins later. */
  correctedInitialAgeMs: number;
  responseTimeMs: number;
  /**
   * How every reader of this answer is counted (X-Cache and the `source` label), when the opening knows
   * better than the cache flow: a peer's answer is the owner's result from source `peer`.
   */
  countedAs?: [CacheResult, Source] | undefined;
  /**
   * How the reader whose request opened the fill is counted, when another thread of the node answered
   * it (home-routing.ts): as that thread served it. Readers that joined are counted as joiners are.
   */
  firstReaderAs?: [CacheResult, Source] | undefined;
}

export type FillHead =
  /** The source failed before an answer's head arrived. */
  | { kind: 'failed'; error: unknown }
  /**
   * A revalidation the origin answered 304: the stored entry updated, what storing it did, and the
   * fields the client whose request revalidated gets (the stored ones updated with all of the 304's).
   */
  | { kind: 'not_modified'; entry: CacheEntry; stored: StoreOutcome; forwardedFields: string[] }
  | ({ kind: 'answer' } & AnswerHead);

/** How a fill's source opened: a 304 or failure it has already dealt with, or an answer to stream. */
export type FillOpening =
  | Extract<FillHead, { kind: 'failed' | 'not_modified' }>
  | {
      kind: 'answer';
      head: AnswerHead;
      body: Readable;
      /** Content-Length of the body; the body must end at exactly that many bytes. */
      announcedBytes: number | undefined;
      /** Neither Content-Length nor chunked: the body ends with the connection (docs/http-caching.md). */
      closeDelimited: boolean;
      /** Present when the answer may be stored: turns the whole body into the entry. */
      complete: ((body: Buffer) => CacheEntry) | undefined;
    };

/** The opening of an answer that only goes to the readers it has: never stored, never shared. */
export function passedAnswer(status: number, fields: string[], body: Readable, countedAs?: [CacheResult, Source]): FillOpening {
  const head: AnswerHead = {
    status,
    fields,
    shareable: false,
    varyNames: [],
    variantKey: '',
    varyStar: false,
    tags: [],
    etag: undefined,
    lastModified: undefined,
    correctedInitialAgeMs: 0,
    responseTimeMs: 0,
    countedAs,
  };
  return { kind: 'answer', head, body, announcedBytes: undefined, closeDelimited: false, complete: undefined };
}

/** How a fill ended, for callers that report on it (background refresh). */
export type FillResult =
  | { state: 'complete'; entry: CacheEntry; stored: StoreOutcome }
  | { state: 'failed'; reason: 'source' | 'body_incomplete' }
  | { state: 'pass'; reason: 'not_storable' | 'too_large' };

/**
 * What the store step did with a complete fill's entry: a store's own outcome, or why it was not
 * offered: covered by an invalidation, an implausible close-delimited length, a 304 for an entry no
 * longer stored (`superseded`), a 304 that made the entry unstorable (`not_stored`: it was dropped).
 */
export type StoreOutcome = PutOutcome | 'invalidated' | 'implausible_length' | 'superseded' | 'not_stored';

export interface FillDeps {
  store: (entry: CacheEntry) => PutOutcome;
  gate: StoreGate | undefined;
  /** Largest body stored; also how far a reader may fall behind the fastest one once the fill passes. */
  maxObjectBytes: number;
  /** In pass, how far the fill reads ahead of its fastest reader. */
  readAheadBytes: number;
  writeIdleTimeoutMs: number;
  counters: FillCounters;
}

export class Fill implements ReadableFill {
  readonly body = new FillBody();
  readonly head: Promise<FillHead>;
  /** Resolves once the state leaves busy and the body (if any) is done. */
  readonly result: Promise<FillResult>;
  /** The invalidation sequence number when the source request started (the store gate's mark). */
  readonly mark: number;
  /** The head, once it arrived. */
  known: FillHead | undefined;
  /** Told when the fill stops taking new readers (a FillTable removes it then). */
  onWithdrawn: ((fill: Fill) => void) | undefined;

  #state: FillState = 'busy';
  #ended = false;
  #failed = false;
  readonly #readers = new Set<FillReader>();
  #source: Readable | undefined;
  #sourcePaused = false;
  #announcedBytes: number | undefined;
  #closeDelimited = false;
  #complete: ((body: Buffer) => CacheEntry) | undefined;
  #resolveHead!: (head: FillHead) => void;
  #resolveResult!: (result: FillResult) => void;
  #result: FillResult | undefined;
  /** Set while #keepWindow cuts readers, so their leaving does not start it again. */
  #keeping = false;
  /** The body is larger than max_object_bytes: the fill takes no new readers. */
  #tooLarge = false;

  constructor(
    readonly key: string,
    private readonly deps: FillDeps,
    open: (fill: Fill) => Promise<FillOpening>,
  ) {
    this.mark = deps.gate?.invalidationMark() ?? 0;
    this.head = new Promise((resolve) => (this.#resolveHead = resolve));
    this.result = new Promise((resolve) => (this.#resolveResult = resolve));
    open(this).then(
      (opening) => this.#opened(opening),
      (error: unknown) => this.#opened({ kind: 'failed', error }),
    );
  }

  get state(): FillState {
    return this.#state;
  }

  get ended(): boolean {
    return this.#ended;
  }

  get failed(): boolean {
    return this.#failed;
  }

  get writeIdleTimeoutMs(): number {
    return this.deps.writeIdleTimeoutMs;
  }

  /**
   * Whether a request may still read this fill from its start: no answer yet, or a shareable one whose
   * first byte is still held, that is not too large to store, and that no invalidation since its start
   * covers. A body too large to store is not shared, as Varnish passes it: each client gets its own,
   * at its own pace, rather than fall behind a faster one and be cut off.
   */
  get joinable(): boolean {
    const head = this.known;
    if (head === undefined) return !this.#failed;
    if (head.kind !== 'answer' || !head.shareable || head.varyStar || this.#failed || this.#ended || this.#tooLarge) return false;
    return this.body.base === 0 && !this.coveredSince(head);
  }

  /** Whether an invalidation made since this fill started covers what it fetched. */
  coveredSince(what: { tags: readonly string[] }): boolean {
    return this.deps.gate?.coveredSince(this.mark, { key: this.key, tags: what.tags }) ?? false;
  }

  /**
   * A place for one client, from the body's first byte; the caller then streams it or releases it.
   * Claimed before the head is known, it keeps the fill from dropping anything meanwhile.
   */
  claim(): FillReader {
    const reader = new FillReader(this);
    this.#readers.add(reader);
    return reader;
  }

  /**
   * Stores `entry` unless an invalidation since this fill started covers it: the one store step of
   * every fill (the whole-body one below and a revalidation's 304 alike).
   */
  store(entry: CacheEntry): StoreOutcome {
    if (this.deps.gate?.coveredSince(this.mark, entry)) {
      this.deps.counters.storeRefused();
      return 'invalidated';
    }
    return this.deps.store(entry);
  }

  readerMoved(_reader: FillReader): void {
    if (this.#state === 'pass') this.#keepWindow();
  }

  readerLeft(reader: FillReader, cut: CutReason | undefined): void {
    this.#readers.delete(reader);
    if (cut !== undefined) this.deps.counters.clientCut(cut);
    if (this.#state !== 'pass' || this.#ended || this.#failed || this.#keeping) return;
    if (this.#readers.size === 0) this.#abandon();
    else this.#keepWindow();
  }

  #opened(opening: FillOpening): void {
    if (opening.kind !== 'answer') {
      if (opening.kind === 'failed') {
        this.#failed = true;
        this.#settle('failed', { state: 'failed', reason: 'source' });
      } else {
        this.#settle('complete', { state: 'complete', entry: opening.entry, stored: opening.stored });
      }
      this.#announce(opening);
      this.#done();
      return;
    }
    this.#announcedBytes = opening.announcedBytes;
    this.#closeDelimited = opening.closeDelimited;
    this.#complete = opening.complete;
    const announced = opening.announcedBytes;
    if (opening.complete !== undefined && announced !== undefined && announced <= this.deps.maxObjectBytes) this.body.reserve(announced);
    const source = opening.body;
    this.#source = source;
    source.on('data', this.#onData);
    source.on('end', this.#onEnd);
    source.on('error', this.#onError);
    source.on('close', this.#onClose);
    this.#announce({ kind: 'answer', ...opening.head });
    if (this.#complete === undefined) this.#pass('not_storable');
    else if (opening.announcedBytes !== undefined && opening.announcedBytes > this.deps.maxObjectBytes) this.#pass('too_large');
  }

  #announce(head: FillHead): void {
    this.known = head;
    this.#resolveHead(head);
    if (!this.joinable) this.onWithdrawn?.(this);
  }

  readonly #onData = (chunk: Buffer): void => {
    this.body.append(chunk);
    // Readers take the chunk first: one chunk that crosses max_object_bytes must not count as their lag.
    for (const reader of this.#readers) reader.pump();
    if (this.#complete !== undefined && this.body.length > this.deps.maxObjectBytes) this.#pass('too_large');
    else if (this.#state === 'pass') this.#keepWindow();
  };

  readonly #onEnd = (): void => {
    const length = this.body.length;
    if (this.#announcedBytes !== undefined && length !== this.#announcedBytes) {
      this.#fail();
      return;
    }
    this.#ended = true;
    this.#detachSource();
    if (this.#state === 'busy') {
      const entry = this.#complete!(this.body.joined());
      // A close-delimited body that ended cleanly with nothing in it cannot be told from an origin that
      // died before writing: it reaches its readers, but is not stored (docs/http-caching.md).
      const stored = this.#closeDelimited && length === 0 ? 'implausible_length' : this.store(entry);
      this.#settle('complete', { state: 'complete', entry, stored });
    }
    this.#done();
  };

  readonly #onError = (): void => {
    this.#fail();
  };

  /** A source destroyed without an error or an end (aborted) ended early all the same. */
  readonly #onClose = (): void => {
    if (!this.#ended) this.#fail();
  };

  /** The body failed or ended early: readers are cut and nothing is stored. */
  #fail(): void {
    if (this.#failed || this.#ended) return;
    this.#failed = true;
    this.#detachSource();
    this.#source?.destroy();
    this.#settle('failed', { state: 'failed', reason: 'body_incomplete' });
    this.#done();
  }

  /** Stops keeping the whole body: readers still get the answer, nothing is stored. */
  #pass(reason: 'not_storable' | 'too_large'): void {
    this.#complete = undefined;
    this.#settle('pass', { state: 'pass', reason });
    if (reason === 'too_large') {
      this.#tooLarge = true;
      this.onWithdrawn?.(this);
    }
    if (this.#readers.size === 0) this.#abandon();
    else this.#keepWindow();
  }

  /**
   * In pass: cuts readers more than max_object_bytes behind the fastest, drops what no reader needs,
   * and pauses the source once its fastest reader is a window behind (the read-ahead, or
   * max_object_bytes when that is smaller), until it is half that. The fastest reader is never cut:
   * the source waits for it, so a lone client, however slow, loses nothing to a lag it cannot have.
   */
  #keepWindow(): void {
    const received = this.body.length;
    let fastest = 0;
    for (const reader of this.#readers) fastest = Math.max(fastest, reader.offset);
    this.#keeping = true;
    for (const reader of this.#readers) if (fastest - reader.offset > this.deps.maxObjectBytes) reader.cut('lag');
    this.#keeping = false;
    if (this.#readers.size === 0) {
      this.#abandon();
      return;
    }
    let slowest = received;
    for (const reader of this.#readers) slowest = Math.min(slowest, reader.offset);
    const wasWhole = this.body.base === 0;
    this.body.dropBefore(slowest);
    if (wasWhole && this.body.base > 0) this.onWithdrawn?.(this);
    const source = this.#source;
    if (source === undefined || this.#ended || this.#failed) return;
    // Paused a full window ahead, resumed half-way: the source is not paused and resumed per chunk.
    const window = Math.min(this.deps.readAheadBytes, this.deps.maxObjectBytes);
    const ahead = received - fastest;
    if (!this.#sourcePaused && ahead >= window) {
      this.#sourcePaused = true;
      source.pause();
    } else if (this.#sourcePaused && ahead < window / 2) {
      this.#sourcePaused = false;
      source.resume();
    }
  }

  /** A fill in pass that nobody reads any more: the source is closed, as a client leaving would. */
  #abandon(): void {
    if (this.#ended || this.#failed) return;
    this.#failed = true;
    this.#detachSource();
    this.#source?.destroy();
    this.#done();
  }

  /** Leaves busy, once: later calls (a pass fill's body ending or failing) change nothing. */
  #settle(state: Exclude<FillState, 'busy'>, result: FillResult): void {
    if (this.#state !== 'busy') return;
    this.#state = state;
    this.#result = result;
  }

  /** The body is done (arrived, failed or abandoned): readers finish, and the result is known. */
  #done(): void {
    this.onWithdrawn?.(this);
    for (const reader of [...this.#readers]) reader.pump();
    if (this.#failed) for (const reader of [...this.#readers]) reader.cut(undefined);
    this.#resolveResult(this.#result!);
  }

  /** Stops listening to the source, but for its errors: destroying it may still emit one, which #fail ignores. */
  #detachSource(): void {
    const source = this.#source;
    if (source === undefined) return;
    source.off('data', this.#onData);
    source.off('end', this.#onEnd);
    source.off('close', this.#onClose);
  }
}
