// The busy fills of a node, by primary key, and how a request joins one (Varnish's waiting list on a
// busy object). A request for a key with a busy fill waits only for that fill's head, never for its
// body; then it reads the fill from the first byte if the answer is shareable, selects the request's
// variant (RFC 9111 §4.1) and no invalidation since the fill started covers it. Otherwise it goes on
// alone. Hits never come here: only a request that found nothing usable stored does.
import type { HeaderLookup } from '../cache/policy/header-lookup.js';
import { variantKey } from '../cache/policy/vary.js';
import type { Fill, FillHead } from './fill.js';
import type { FillReader } from './fill-reader.js';
import { HitForPassMarkers } from './hit-for-pass.js';

/** A place in a busy fill, and the head the request is to answer with. */
export interface JoinedFill {
  fill: Fill;
  reader: FillReader;
  head: Exclude<FillHead, { kind: 'failed' }>;
}

/**
 * Fills a request waits on before it goes alone: each wait is for a head, so a request pays at most
 * this many origin first-byte times before its own fetch (several fills of one key exist only when
 * their answers vary).
 */
const MAX_JOIN_ATTEMPTS = 3;

export class FillTable {
  readonly #busy = new Map<string, Fill[]>();
  /** Keys whose answers are not shared for now: their requests go to the origin each alone. */
  readonly markers = new HitForPassMarkers();

  /** Makes `fill` the busy object of its key until it stops taking readers. */
  add(fill: Fill): void {
    if (!fill.joinable) return;
    const fills = this.#busy.get(fill.key);
    if (fills) fills.push(fill);
    else this.#busy.set(fill.key, [fill]);
    fill.onWithdrawn = this.#withdraw;
  }

  /**
   * Claims a place for a request in a busy fill of `key` that can answer it, waiting for heads as
   * needed; undefined when there is none and the request is to start its own.
   */
  async join(key: string, requestHeaders: HeaderLookup): Promise<JoinedFill | undefined> {
    for (let attempt = 0; attempt < MAX_JOIN_ATTEMPTS; attempt += 1) {
      const fill = this.#candidate(key, requestHeaders);
      if (fill === undefined) return undefined;
      const reader = fill.claim();
      const head = fill.known ?? (await fill.head);
      if (usable(fill, head, requestHeaders)) return { fill, reader, head: head as JoinedFill['head'] };
      reader.release();
      // Another variant may still read it; a fill nobody can join any more leaves the table.
      if (!fill.joinable) this.#withdraw(fill);
    }
    return undefined;
  }

  /** The first fill of `key` that matches the request, or whose head is not known yet. */
  #candidate(key: string, requestHeaders: HeaderLookup): Fill | undefined {
    const fills = this.#busy.get(key);
    if (fills === undefined) return undefined;
    let waiting: Fill | undefined;
    for (const fill of fills) {
      if (!fill.joinable) continue;
      const head = fill.known;
      if (head === undefined) waiting ??= fill;
      else if (usable(fill, head, requestHeaders)) return fill;
    }
    return waiting;
  }

  readonly #withdraw = (fill: Fill): void => {
    const fills = this.#busy.get(fill.key);
    if (fills === undefined) return;
    const at = fills.indexOf(fill);
    if (at < 0) return;
    if (fills.length === 1) this.#busy.delete(fill.key);
    else fills.splice(at, 1);
  };
}

/** Whether a request may be answered with this head of `fill`. */
function usable(fill: Fill, head: FillHead, requestHeaders: HeaderLookup): boolean {
  switch (head.kind) {
    case 'failed':
      return false;
    case 'not_modified':
      return !fill.coveredSince(head.entry) && variantKey(head.entry.varyNames, requestHeaders) === head.entry.variantKey;
    case 'answer':
      return fill.joinable && variantKey(head.varyNames, requestHeaders) === head.variantKey;
  }
}
