// The cache state machine for GET and HEAD on a caching route (spec §3.1, RFC 9111 §4): look the
// request up in the tiers, serve what is fresh, serve stale within stale-while-revalidate while one
// background revalidation runs, and send everything else to the fill layer: a miss or a revalidation
// joins the busy fill of its key or starts one, and reads it at its own pace (DESIGN principle 12).
import { entryFields, type CacheEntry } from '../cache/entry.js';
import type { TieredCache } from '../store/tiered-cache.js';
import { headersFromRaw, type HeaderLookup } from '../cache/policy/header-lookup.js';
import { requestDirectives, type RequestDirectives } from '../cache/policy/request-directives.js';
import { decideReuse, staleIfUnreachableAllowed } from '../cache/policy/reuse.js';
import { originAnswerResult, settledResult, type FillOutcome } from '../cache/policy/cache-result.js';
import { evaluateConditional, notModifiedFields } from '../cache/policy/conditional.js';
import { ageSeconds } from '../cache/policy/age.js';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import type { Logger } from '../observe/logger.js';
import type { CacheResult, Source } from '../observe/metrics.js';
import { passedAnswer, type AnswerHead, type Fill, type FillHead, type FillOpening, type FillResult } from '../fill/fill.js';
import type { CachingRoute, OriginFillRequest } from '../fill/origin-opening.js';
import type { FillLayer } from '../fill/fill-layer.js';
import type { FillReader } from '../fill/fill-reader.js';
import type { Exchange } from './exchange.js';
import { fetchFromOrigin, type OriginRequest } from '../fill/origin-fetch.js';
import { relayInformational } from './informational.js';
import { passThrough } from './pass-through.js';
import { sendProxyError, sendUpstreamFailure } from './respond.js';
import { serveStored } from './stored-response.js';
import { freshEntry, storedEntry } from './stored-lookup.js';
import { RecordEntry } from '../store/shared-hot/hot-record.js';
import type { HomeRouting } from './home-routing.js';

/** Told of every request that found an entry stored and may be answered from it (background refresh). */
export type ServedHook = (entry: CacheEntry, request: OriginRequest, route: CachingRoute) => void;

export interface CacheFlowDeps {
  cache: TieredCache;
  /** Where misses and revalidations go: busy fills, the store gate, the hit-for-pass markers. */
  fills: FillLayer;
  now: () => number;
  logger: Logger;
  /** The lazy invalidation check (spec §1.1): true when a ban or purge newer than the entry hides it. */
  isInvalidated?: (entry: CacheEntry) => boolean;
  /**
   * Whether a stored entry that no invalidation hides may be served now; false keeps it stored but
   * answers as if it were not (a clustered node catching up with invalidations it missed).
   */
  servable?: ((entry: CacheEntry) => boolean) | undefined;
  /** Strong mode: keys another node owns are fetched from it (spec §1.4 peer fetch). */
  peer?: PeerFetch | undefined;
  /**
   * A data-plane thread of several: a key's misses are answered by its home thread (home-routing.ts),
   * which coalesces them for the whole node. Absent in a single-thread node, every key's home.
   */
  home?: HomeRouting | undefined;
  onServedFromCache?: ServedHook | undefined;
}

/** Strong mode's peer fetch, as the cache flow uses it (src/clustering/peer-fetcher.ts). */
export interface PeerFetch {
  /**
   * Where the request for `key` goes: the member that owns it, the origin (its owner is suspect), or
   * here (this node owns it, or the request was forwarded by this node's own owner side).
   */
  route(exchange: Exchange, key: string): Route;
  /** Whether requests for `key` skip its owner for now (it refused the object as too large). */
  bypassesOwner(key: string): boolean;
  /**
   * The opening of a fill that asks `owner` for the exchange's request; `shareable` when the request
   * is plain, so the answer may go to every reader of the fill. `fallback` opens it on the origin when
   * the owner cannot answer.
   */
  openOnOwner(
    owner: string,
    exchange: Exchange,
    key: string,
    shareable: boolean,
    fallback: (fill: Fill) => Promise<FillOpening>,
  ): (fill: Fill) => Promise<FillOpening>;
}

/** Where a strong-mode request goes: answered here, by the key's owner, or by the origin. */
export type Route = { kind: 'here' } | { kind: 'owner'; owner: string } | { kind: 'origin'; reason: 'owner_suspect' };

/** Request fields only a full answer of the owner's data plane (or the origin's) satisfies. */
const NEEDS_OWN_ANSWER = ['if-none-match', 'if-modified-since', 'range', 'if-range'];

interface Hit {
  entry: CacheEntry;
  source: 'hot' | 'warm';
}

/** What one client request brings to the state machine. */
interface Lookup {
  exchange: Exchange;
  key: string;
  requestHeaders: HeaderLookup;
  directives: RequestDirectives;
  route: CachingRoute;
}

/** A stored entry that may not be served without asking the origin, and whether stale-if-error applies. */
interface Stale {
  hit: Hit;
  staleIfError: boolean;
}

/** How a request came to read a fill: it started it, or it joined one another request started. */
type Role = 'first' | 'joined';

export class CacheFlow {
  /** Background revalidations in flight, by key and variant: one each. */
  private readonly backgroundRevalidations = new Set<string>();

  constructor(private readonly deps: CacheFlowDeps) {}

  /**
   * Answers one request. A request served from the cache is answered before this returns, with no
   * promise made (promise bookkeeping measured several µs per hit) and without touching the fill
   * layer; anything that must wait for the origin returns the promise of that work.
   */
  handle(exchange: Exchange, route: CachingRoute): Promise<unknown> | undefined {
    const { request } = exchange;
    const requestHeaders = headersFromRaw(request.rawHeaders);
    if (requestHeaders('if-match') !== undefined || requestHeaders('if-unmodified-since') !== undefined) {
      // RFC 9111 §4.3.2: a cache must not evaluate these; the origin answers them.
      return passThrough(this.deps.fills, route.pool, exchange, request);
    }
    const lookup: Lookup = {
      exchange,
      key: exchange.edge.key,
      requestHeaders,
      directives: requestDirectives(requestHeaders),
      route,
    };
    const peerRoute = this.deps.peer?.route(exchange, lookup.key);
    if (peerRoute !== undefined && peerRoute.kind !== 'here') {
      const owner = peerRoute.kind === 'owner' ? peerRoute.owner : undefined;
      // The key's home thread asks the owner once for the whole node.
      if (this.awayFromHome(lookup)) return this.fromHome(lookup, undefined, (shared) => this.ownerOpening(lookup, owner, shared));
      return this.fromOwner(lookup, owner);
    }
    const hit = this.lookup(lookup);
    if (!hit) {
      if (lookup.directives.onlyIfCached) {
        // RFC 9111 §5.2.1.7: nothing usable is stored, and the client forbids going to the origin.
        exchange.served('MISS', 'origin');
        sendProxyError(exchange, 504, 'only-if-cached and nothing usable is stored');
        return;
      }
      return this.miss(lookup, undefined);
    }
    const now = this.deps.now();
    const decision = decideReuse(lookup.directives, hit.entry, now);
    if (decision.action !== 'gateway_timeout') this.deps.onServedFromCache?.(hit.entry, originRequestOf(exchange), route);
    switch (decision.action) {
      case 'fresh':
        serveStored(exchange, hit.entry, requestHeaders, 'HIT', hit.source, now);
        // A plain hit is the entry's only reader: a large record's memory is reused once it is sent.
        if (hit.entry instanceof RecordEntry) hit.entry.releaseWhenSent(exchange.response);
        return;
      case 'stale_acceptable':
        serveStored(exchange, hit.entry, requestHeaders, 'STALE', hit.source, now);
        return;
      case 'stale_while_revalidate':
        serveStored(exchange, hit.entry, requestHeaders, 'STALE', hit.source, now);
        // The home thread revalidates for the whole node: it is handed the request, and answers it STALE too.
        if (this.awayFromHome(lookup)) this.deps.home!.nudge(exchange, lookup.key);
        else this.revalidateInBackground(hit.entry, originRequestOf(exchange), route);
        return;
      case 'gateway_timeout':
        exchange.served('MISS', 'origin');
        sendProxyError(exchange, 504, 'only-if-cached and the stored response needs revalidation');
        return;
      case 'revalidate':
        return this.miss(lookup, { hit, staleIfError: decision.staleIfError });
    }
  }

  /**
   * The stored entry that answers a plain request for `key` right now as a HIT (present, not hidden by
   * an invalidation, fresh for these request directives), or undefined. Peer fetch answers from it
   * without a trip through the data plane.
   */
  freshEntry(key: string, requestHeaders: HeaderLookup): CacheEntry | undefined {
    return freshEntry(this.deps, key, requestHeaders);
  }

  private lookup({ key, requestHeaders }: Pick<Lookup, 'key' | 'requestHeaders'>): Hit | undefined {
    return storedEntry(this.deps, key, requestHeaders);
  }

  /**
   * A miss, or a stored entry that must be revalidated: joins the busy fill of the key that can answer
   * the request, or starts one on the origin (conditional when `stale` is given).
   */
  private miss(lookup: Lookup, stale: Stale | undefined): Promise<void> {
    const ask = this.originAsk(lookup, stale);
    if (this.awayFromHome(lookup)) return this.fromHome(lookup, stale, () => this.deps.fills.originOpening(ask));
    // A request with credentials or no-store makes a fill nobody else waits on: its answer is most
    // likely its own (RFC 9111 §3.5, §5.2.1.5).
    return this.viaFill(lookup, !isPersonal(lookup), (shared) => this.deps.fills.fromOrigin(ask, shared), stale);
  }

  /**
   * A key another node owns (strong mode): a plain GET joins or starts the busy fill of the key, opened
   * on the owner, so concurrent requests on this node share one peer fetch; anything else asks the
   * owner alone. When the owner cannot answer (or is suspect: `owner` undefined), the origin answers,
   * and this node keeps no copy.
   */
  private fromOwner(lookup: Lookup, owner: string | undefined): Promise<void> {
    return this.viaFill(lookup, isPlain(lookup), (shared) => this.deps.fills.open(lookup.key, this.ownerOpening(lookup, owner, shared), shared), undefined);
  }

  /** The opening of a fill that asks the key's owner (or the origin, when the owner is suspect or refused it). */
  private ownerOpening(lookup: Lookup, owner: string | undefined, shared: boolean): (fill: Fill) => Promise<FillOpening> {
    const peer = this.deps.peer!;
    const { exchange, key, route } = lookup;
    const fallback = isPlain(lookup)
      ? this.deps.fills.originOpening({ ...this.originAsk(lookup, undefined), store: false })
      : forwardToOrigin(route.pool, exchange, this.deps.now);
    return owner === undefined || peer.bypassesOwner(key) ? fallback : peer.openOnOwner(owner, exchange, key, shared, fallback);
  }

  /** Whether this thread hands the request's miss to the key's home thread rather than answer it. */
  private awayFromHome(lookup: Lookup): boolean {
    const { home } = this.deps;
    return home !== undefined && !isPersonal(lookup) && !this.deps.fills.passMarked(lookup.key) && !home.isHome(lookup.key, lookup.exchange);
  }

  /**
   * A miss (or a revalidation, or a key another node owns) handed to the key's home thread, read
   * through a fill of its own; `here` opens the fill as this thread would itself, when the home cannot
   * be reached.
   */
  private fromHome(lookup: Lookup, stale: Stale | undefined, here: (shared: boolean) => (fill: Fill) => Promise<FillOpening>): Promise<void> {
    const home = this.deps.home!;
    const { exchange, key } = lookup;
    // Every request goes to the home on its own: the home's fills coalesce them (and know its
    // hit-for-pass markers), so this thread keeps no busy object of its own for the key.
    return this.viaFill(lookup, false, () => this.deps.fills.open(key, home.openAtHome(exchange, key, isPlain(lookup), here(false)), false), stale);
  }

  /**
   * Joins a busy fill of the key that can answer the request (unless `coalesce` is false or a
   * hit-for-pass marker says the key's answers are not shared), or starts one with `start`, and
   * answers the request from it.
   */
  private async viaFill(lookup: Lookup, coalesce: boolean, start: (shared: boolean) => Fill, stale: Stale | undefined): Promise<void> {
    const { fills } = this.deps;
    if (coalesce && !fills.passMarked(lookup.key)) {
      const joined = await fills.join(lookup.key, lookup.requestHeaders);
      if (joined) return this.answer(lookup, joined.fill, joined.reader, joined.head, 'joined', stale);
    }
    const fill = start(coalesce);
    const reader = fill.claim();
    this.answer(lookup, fill, reader, fill.known ?? (await fill.head), 'first', stale);
  }

  /** What a fill for this request asks of the origin. */
  private originAsk(lookup: Lookup, stale: Stale | undefined): OriginFillRequest {
    const { exchange, key, requestHeaders, directives, route } = lookup;
    return {
      key,
      request: originRequestOf(exchange),
      requestHeaders,
      directives,
      route,
      revalidating: stale?.hit.entry,
      // Only the client whose request opens the fill gets the origin's 1xx answers.
      onInformational: relayInformational(exchange),
    };
  }

  /** Answers a request from a fill's head: its body streamed by `reader`, or something else instead. */
  private answer(lookup: Lookup, fill: Fill, reader: FillReader, head: FillHead, role: Role, stale: Stale | undefined): void {
    const { exchange, requestHeaders } = lookup;
    const now = this.deps.now();
    if (head.kind === 'failed') {
      reader.release();
      if (stale && (stale.staleIfError || staleIfUnreachableAllowed(stale.hit.entry, now, lookup.route.policy.staleIfUnreachableMs ?? 0))) {
        serveStored(exchange, stale.hit.entry, requestHeaders, 'STALE', stale.hit.source, now);
      } else {
        this.failOrigin(exchange, head.error, stale?.hit.entry.mustRevalidate === true);
      }
      return;
    }
    if (head.kind === 'not_modified') {
      reader.release();
      // The client whose request revalidated gets the stored response updated with all of the 304's
      // fields, those the stored copy leaves out (private="…", no-cache="…", a Set-Cookie) included.
      const served = role === 'first' ? { ...entryFields(head.entry), headers: head.forwardedFields } : head.entry;
      serveStored(exchange, served, requestHeaders, 'REVALIDATED', 'origin', now);
      return;
    }
    if (stale?.staleIfError && head.status >= 500) {
      reader.release();
      serveStored(exchange, stale.hit.entry, requestHeaders, 'STALE', stale.hit.source, now);
      return;
    }
    const [cacheResult, source] = this.servedAs(lookup, fill, head, role);
    exchange.served(cacheResult, source);
    if (role === 'first' && source === 'origin' && head.shareable) this.settleWhenDone(exchange, head.status, fill);
    const { response } = exchange;
    const age = String(ageSeconds(head, now));
    // A request that joined a fill is answered as from what will be stored; the one that opened it asked
    // about a resource svc holds nothing of, and gets the whole answer (RFC 9111 §4.3.2).
    if (role === 'joined' && head.shareable && evaluateConditional(requestHeaders, { ...head, headers: head.fields }) === 'not_modified') {
      const fields = notModifiedFields(head.sharedFields ?? head.fields);
      fields.push('age', age, 'x-cache', cacheResult);
      response.writeHead(304, fields);
      response.end();
      reader.release();
      return;
    }
    // The fields a qualified private or no-cache names go to the client whose request fetched the
    // answer, never to one that joined its fill: that one is served what is stored (RFC 9111 §5.2.2).
    const fields = (role === 'first' ? head.fields : (head.sharedFields ?? head.fields)).slice();
    // svc states the Age of what it may store (RFC 9111 §5.1); an answer it only passes on keeps the origin's.
    if (head.shareable) fields.push('age', age);
    fields.push('x-cache', cacheResult);
    response.writeHead(head.status, fields);
    if (exchange.request.method === 'HEAD') {
      // A HEAD client has its answer with the head; the fill still reads the body, for the cache.
      response.end();
      reader.release();
      return;
    }
    reader.stream(exchange);
  }

  /**
   * Stale-while-revalidate: one background revalidation per variant, never delaying a client. Its fill
   * is the key's busy object meanwhile, so a client that needs the origin for the key waits on it.
   */
  private revalidateInBackground(entry: CacheEntry, request: OriginRequest, route: CachingRoute): void {
    const id = `${entry.key}\u0000${entry.variantKey}`;
    if (this.backgroundRevalidations.has(id)) return;
    this.backgroundRevalidations.add(id);
    const fill = this.deps.fills.fromOrigin(
      { key: entry.key, request, requestHeaders: headersFromRaw(request.rawHeaders), route, revalidating: entry },
      true,
    );
    void fill.head.then((head) => {
      if (head.kind === 'failed') this.deps.logger.warn({ err: head.error, key: entry.key }, 'background revalidation failed');
    });
    void fill.result.then(() => this.backgroundRevalidations.delete(id));
  }

  /**
   * The origin failed and nothing stale may stand in. RFC 9111 §5.2.2.2: an entry under
   * must-revalidate that cannot be revalidated gets a 504, whatever the failure was.
   */
  private failOrigin(exchange: Exchange, error: unknown, mustRevalidate: boolean): void {
    exchange.served('MISS', 'origin');
    sendUpstreamFailure(exchange, error, mustRevalidate ? { status: 504 } : {});
  }

  /**
   * What a fill's reader is counted as (docs/http-caching.md, "X-Cache and cache_result"). The request
   * that opened a fill on the origin: MISS when the answer is to be stored or the origin failed (5xx),
   * BYPASS when svc knows before the first byte that it will not keep it. One that joined a fill that
   * is still busy (to be stored): a HIT, as Varnish counts a request that waited on a busy object; one
   * that joined an answer too large to store: a MISS. A peer's answer is counted as the owner counted it.
   */
  private servedAs(lookup: Lookup, fill: Fill, head: AnswerHead, role: Role): [CacheResult, Source] {
    if (head.countedAs) return head.countedAs;
    if (role === 'joined') return fill.state === 'busy' ? ['HIT', 'hot'] : ['MISS', 'origin'];
    if (head.firstReaderAs) {
      // The home thread passed it on: this thread's next requests for the key go to the origin too.
      if (head.firstReaderAs[0] === 'BYPASS') this.deps.fills.markPass(lookup.key);
      return head.firstReaderAs;
    }
    const result = originAnswerResult({
      status: head.status,
      storable: head.shareable,
      contentLength: contentLengthOf(head.fields),
      maxObjectBytes: this.deps.fills.maxObjectBytes,
      atVaryCap: head.shareable && this.deps.cache.atVaryCap(lookup.key, head.variantKey),
    });
    return [result, 'origin'];
  }

  /**
   * The head said MISS before the body came: once the fill ends, the count says what happened (a body
   * that grew past max_object_bytes or that the store refused is a BYPASS, one that failed a MISS).
   */
  private settleWhenDone(exchange: Exchange, status: number, fill: Fill): void {
    exchange.countWhen(fill.result.then((result) => exchange.served(settledResult(status, fillOutcome(result)), 'origin')));
  }
}

function fillOutcome(result: FillResult): FillOutcome {
  if (result.state === 'failed') return 'failed';
  return result.state === 'complete' && result.stored === 'stored' ? 'stored' : 'not_stored';
}

/** The Content-Length of an answer's fields, when it has one. */
function contentLengthOf(fields: readonly string[]): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i]!.toLowerCase() === 'content-length') return fields[i + 1];
  return undefined;
}

/** A GET whose answer may go to every client of the key: nothing personal, no conditional, no range. */
function isPlain(lookup: Lookup): boolean {
  return lookup.exchange.request.method === 'GET' && !isPersonal(lookup) && NEEDS_OWN_ANSWER.every((name) => lookup.requestHeaders(name) === undefined);
}

/** Whether the request carries what makes its answer its own: credentials, or no-store. */
function isPersonal(lookup: Lookup): boolean {
  return lookup.requestHeaders('authorization') !== undefined || lookup.directives.noStore;
}

/**
 * The opening of a fill that forwards the client's request to the origin as it came (conditionals,
 * ranges): for a node answering a key it does not own when the owner cannot. Counted a MISS from the
 * origin, and never stored.
 */
function forwardToOrigin(pool: UpstreamPool, exchange: Exchange, now: () => number): (fill: Fill) => Promise<FillOpening> {
  return async () => {
    const answer = await fetchFromOrigin(
      pool,
      originRequestOf(exchange),
      { method: exchange.request.method ?? 'GET', forCache: false, onInformational: relayInformational(exchange) },
      now,
    );
    return passedAnswer(answer.statusCode, answer.fields, answer.body, ['MISS', 'origin']);
  };
}

function originRequestOf(exchange: Exchange): OriginRequest {
  const { edge } = exchange;
  return { path: edge.pathAndQuery, rawHeaders: exchange.request.rawHeaders, forwarding: exchange.forwarding, clientAddress: edge.clientAddress, trace: exchange.trace };
}
