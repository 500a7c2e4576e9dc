// The cache state machine for GET and HEAD on a caching route (spec §3.1, RFC 9111 §4): look the
// request up in the tiers, serve what is fresh, serve stale within stale-while-revalidate while one
// background revalidation runs, revalidate what must be, and fill misses with one coalesced origin
// fetch whose body streams to the first client while it is stored.
import type { CacheEntry } from '../cache/entry.js';
import type { TieredCache } from '../cache/tiered-cache.js';
import { Coalescer } from '../cache/coalescer.js';
import { headersFromRaw, type HeaderLookup } from '../cache/policy/header-lookup.js';
import { requestDirectives, type RequestDirectives } from '../cache/policy/request-directives.js';
import { decideReuse, staleIfUnreachableAllowed } from '../cache/policy/reuse.js';
import { originAnswerResult, settledResult } from '../cache/policy/cache-result.js';
import { canStore } from '../cache/policy/storability.js';
import { mergeNotModified, selectNotModifiedTargets } from '../cache/policy/not-modified.js';
import { forwardedFields } from '../cache/policy/stored-fields.js';
import type { RouteCacheOptions } from '../cache/policy/route-cache-options.js';
import { variantKey } from '../cache/policy/vary.js';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import type { Logger } from '../observe/logger.js';
import { buildEntry, entryFromNotModified } from './build-entry.js';
import type { Exchange } from './exchange.js';
import { fetchFromOrigin, type OriginAnswer, type OriginRequest } from './origin-fetch.js';
import { relayInformational } from './informational.js';
import { relayAndCollect } from './body-relay.js';
import { passThrough } from './pass-through.js';
import { sendProxyError, sendUpstreamFailure } from './respond.js';
import { serveStored } from './stored-response.js';

export interface CacheFlowDeps {
  cache: TieredCache;
  now: () => number;
  /** Bodies larger than this are relayed but not stored. */
  maxObjectBytes: number;
  logger: Logger;
  /** The lazy invalidation check (spec §1.1): true when a ban or purge newer than the entry hides it. */
  isInvalidated?: (entry: CacheEntry) => boolean;
  /**
   * Whether a stored entry that no invalidation hides may be served now; false keeps it stored but
   * answers as if it were not (a clustered node catching up with invalidations it missed).
   */
  servable?: (entry: CacheEntry) => boolean;
  /**
   * Strong mode: answers a request from the owner of its key when another node owns it, returning
   * the promise of that answer; undefined when this node answers (spec §1.4 peer fetch).
   */
  peerRoute?: (exchange: Exchange, key: string, route: CachingRoute) => Promise<unknown> | undefined;
  /** Told of every request that found an entry stored and may be answered from it (background refresh). */
  onServedFromCache?: (entry: CacheEntry, request: OriginRequest, route: CachingRoute) => void;
}

export interface CachingRoute {
  label: string;
  pool: UpstreamPool;
  policy: RouteCacheOptions;
}

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

/** The stored variant a request selects (RFC 9111 §4.1): the one whose Vary fields it matches. */
function variantForRequest(candidates: readonly CacheEntry[], requestHeaders: HeaderLookup): CacheEntry | undefined {
  for (const entry of candidates) if (entry.variantKey === variantKey(entry.varyNames, requestHeaders)) return entry;
  return undefined;
}

/** What a coalesced fetch left behind for the requests that waited on it. */
type FillOutcome = 'stored' | 'not_stored';

export class CacheFlow {
  private readonly fills = new Coalescer<FillOutcome>();
  private readonly backgroundRevalidations = new Coalescer<FillOutcome>();

  constructor(private readonly deps: CacheFlowDeps) {}

  /** `max_object_bytes` changed (a configuration reload): fills that start from now on use it. */
  setMaxObjectBytes(bytes: number): void {
    this.deps.maxObjectBytes = bytes;
  }

  /**
   * Answers one request. A request served from the cache is answered before this returns, with no
   * promise made (promise bookkeeping measured several µs per hit); anything that must wait for the
   * origin returns the promise of that work.
   */
  handle(exchange: Exchange, route: CachingRoute): Promise<unknown> | undefined {
    const { request } = exchange;
    const requestHeaders = headersFromRaw(request.rawHeaders);
    if (requestHeaders('if-match') !== undefined || requestHeaders('if-unmodified-since') !== undefined) {
      // RFC 9111 §4.3.2: a cache must not evaluate these; the origin answers them.
      return passThrough(route.pool, exchange, request);
    }
    const lookup: Lookup = {
      exchange,
      key: exchange.edge.key,
      requestHeaders,
      directives: requestDirectives(requestHeaders),
      route,
    };
    const viaPeer = this.deps.peerRoute?.(exchange, lookup.key, route);
    if (viaPeer) return viaPeer;
    const hit = this.lookup(lookup);
    if (!hit) {
      if (lookup.directives.onlyIfCached) {
        // RFC 9111 §5.2.1.7: nothing usable is stored, and the client forbids going to the origin.
        exchange.served('MISS', 'origin');
        sendProxyError(exchange, 504, 'only-if-cached and nothing usable is stored');
        return;
      }
      return this.fill(lookup);
    }
    const now = this.deps.now();
    const decision = decideReuse(lookup.directives, hit.entry, now);
    if (decision.action !== 'gateway_timeout') this.deps.onServedFromCache?.(hit.entry, originRequestOf(exchange), route);
    switch (decision.action) {
      case 'fresh':
        serveStored(exchange, hit.entry, requestHeaders, 'HIT', hit.source, now);
        return;
      case 'stale_acceptable':
        serveStored(exchange, hit.entry, requestHeaders, 'STALE', hit.source, now);
        return;
      case 'stale_while_revalidate':
        serveStored(exchange, hit.entry, requestHeaders, 'STALE', hit.source, now);
        this.revalidateInBackground(lookup.key, hit.entry, originRequestOf(exchange), route);
        return;
      case 'gateway_timeout':
        exchange.served('MISS', 'origin');
        sendProxyError(exchange, 504, 'only-if-cached and the stored response needs revalidation');
        return;
      case 'revalidate':
        return this.revalidate(lookup, hit, decision.staleIfError);
    }
  }

  /**
   * The stored entry that answers a plain request for `key` right now as a HIT (present, not hidden by
   * an invalidation, fresh for these request directives), or undefined. Peer fetch answers from it
   * without a trip through the data plane.
   */
  freshEntry(key: string, requestHeaders: HeaderLookup): CacheEntry | undefined {
    const hit = this.lookup({ key, requestHeaders });
    if (!hit) return undefined;
    return decideReuse(requestDirectives(requestHeaders), hit.entry, this.deps.now()).action === 'fresh' ? hit.entry : undefined;
  }

  private lookup({ key, requestHeaders }: Pick<Lookup, 'key' | 'requestHeaders'>): Hit | undefined {
    const hit = this.deps.cache.lookup(key, variantForRequest, requestHeaders);
    if (hit && this.deps.isInvalidated?.(hit.entry)) {
      this.deps.cache.delete(hit.entry.key, hit.entry.variantKey);
      return undefined;
    }
    if (hit && this.deps.servable?.(hit.entry) === false) return undefined;
    return hit;
  }

  /** A miss: one origin fetch per key; requests arriving meanwhile wait for it and then look again. */
  private async fill(lookup: Lookup): Promise<void> {
    const pending = this.fills.pending(lookup.key);
    if (pending) {
      if ((await pending) === 'stored' && this.serveIfFresh(lookup)) return;
      // The fetch waited on was not storable, or stored another variant: this request goes alone.
      await this.fetchAndServe(lookup, undefined);
      return;
    }
    await this.fills.run(lookup.key, () => this.fetchAndServe(lookup, undefined));
  }

  /** After waiting on another request's fetch: serves its result when it suits this request. */
  private serveIfFresh(lookup: Lookup): boolean {
    const hit = this.lookup(lookup);
    if (!hit) return false;
    const now = this.deps.now();
    if (decideReuse(lookup.directives, hit.entry, now).action !== 'fresh') return false;
    serveStored(lookup.exchange, hit.entry, lookup.requestHeaders, 'HIT', hit.source, now);
    return true;
  }

  /** Fetches from the origin (conditionally when `stale` is given) and answers the client. */
  private async fetchAndServe(lookup: Lookup, stale: { hit: Hit; staleIfError: boolean } | undefined): Promise<FillOutcome> {
    const { exchange, route } = lookup;
    let answer: OriginAnswer;
    try {
      answer = await fetchFromOrigin(
        route.pool,
        originRequestOf(exchange),
        { method: 'GET', forCache: true, ...(stale ? { validators: stale.hit.entry } : {}), onInformational: relayInformational(exchange) },
        this.deps.now,
      );
    } catch (error) {
      const now = this.deps.now();
      if (stale && (stale.staleIfError || staleIfUnreachableAllowed(stale.hit.entry, now, route.policy.staleIfUnreachableMs ?? 0))) {
        serveStored(exchange, stale.hit.entry, lookup.requestHeaders, 'STALE', stale.hit.source, now);
      } else {
        this.failOrigin(exchange, error, stale?.hit.entry.mustRevalidate === true);
      }
      return 'not_stored';
    }
    if (stale && answer.statusCode === 304) {
      answer.body.resume();
      const notModified = headersFromRaw(answer.fields);
      if (selectNotModifiedTargets(notModified, [stale.hit.entry]).length === 0) {
        // The 304 does not describe what svc holds (RFC 9111 §4.3.4): ask again without validators.
        return this.fetchAndServe(lookup, undefined);
      }
      const updated = this.applyNotModified(stale.hit.entry, answer, lookup.requestHeaders, route);
      // This client gets the stored response updated with all of the 304's fields, those the stored
      // copy leaves out (private="…", no-cache="…", or a Set-Cookie that makes it unstorable) included.
      const served = { ...(updated ?? stale.hit.entry), headers: forwardedFields(mergeNotModified(stale.hit.entry.headers, answer.fields)) };
      serveStored(exchange, served, lookup.requestHeaders, 'REVALIDATED', 'origin', this.deps.now());
      return updated ? 'stored' : 'not_stored';
    }
    if (stale?.staleIfError && answer.statusCode >= 500) {
      answer.body.resume();
      serveStored(exchange, stale.hit.entry, lookup.requestHeaders, 'STALE', stale.hit.source, this.deps.now());
      return 'not_stored';
    }
    return this.serveOriginAnswer(lookup, answer);
  }

  /** Relays a full origin answer to the client, storing it when RFC 9111 §3 allows. */
  private async serveOriginAnswer(lookup: Lookup, answer: OriginAnswer): Promise<FillOutcome> {
    const { exchange, route, requestHeaders } = lookup;
    const { response, request } = exchange;
    const bodyReader = request.method === 'HEAD' ? undefined : exchange;
    const verdict = canStore(
      { method: 'GET', headers: requestHeaders, directives: lookup.directives },
      { status: answer.statusCode, headers: headersFromRaw(answer.fields), responseTimeMs: answer.responseTimeMs },
      route.policy,
    );
    const draft = verdict.store
      ? buildEntry({ key: lookup.key, requestHeaders, answer, route: route.label, policy: route.policy, omitFields: verdict.omitFields })
      : undefined;
    const cacheResult = originAnswerResult({
      status: answer.statusCode,
      storable: verdict.store,
      contentLength: firstHeaderValue(answer.headers['content-length']),
      maxObjectBytes: this.deps.maxObjectBytes,
      atVaryCap: draft !== undefined && this.deps.cache.atVaryCap(lookup.key, draft.variantKey),
    });
    exchange.served(cacheResult, 'origin');
    if (!draft) {
      const fields = answer.fields.slice();
      fields.push('x-cache', cacheResult);
      response.writeHead(answer.statusCode, fields);
      // A HEAD client has its answer with the head; the GET body it does not want is not read.
      if (!bodyReader) response.end();
      await relayAndCollect(answer.body, bodyReader, 0);
      return 'not_stored';
    }
    const fields = draft.clientFields.slice();
    fields.push('age', String(draft.ageSecondsAtResponse), 'x-cache', cacheResult);
    response.writeHead(answer.statusCode, fields);
    // A HEAD client has its answer with the head; the body is still read, for the cache.
    if (!bodyReader) response.end();
    const relayed = await relayAndCollect(answer.body, bodyReader, this.deps.maxObjectBytes);
    const outcome = !relayed.complete ? 'failed' : relayed.body && this.deps.cache.store(draft.complete(relayed.body)) === 'stored' ? 'stored' : 'not_stored';
    exchange.served(settledResult(answer.statusCode, outcome), 'origin');
    return outcome === 'stored' ? 'stored' : 'not_stored';
  }

  /** A stored entry that may not be served without asking the origin (RFC 9111 §4.3). */
  private async revalidate(lookup: Lookup, hit: Hit, staleIfError: boolean): Promise<void> {
    const pending = this.fills.pending(lookup.key);
    if (pending) {
      await pending;
      if (this.serveIfFresh(lookup)) return;
    }
    await this.fills.run(lookup.key, () => this.fetchAndServe(lookup, { hit, staleIfError }));
  }

  /** Stale-while-revalidate: one background revalidation per variant, never delaying a client. */
  private revalidateInBackground(key: string, entry: CacheEntry, request: OriginRequest, route: CachingRoute): void {
    const requestHeaders = headersFromRaw(request.rawHeaders);
    const run = async (): Promise<FillOutcome> => {
      const answer = await fetchFromOrigin(route.pool, request, { method: 'GET', forCache: true, validators: entry }, this.deps.now);
      if (answer.statusCode === 304 && selectNotModifiedTargets(headersFromRaw(answer.fields), [entry]).length > 0) {
        answer.body.resume();
        return this.applyNotModified(entry, answer, requestHeaders, route) ? 'stored' : 'not_stored';
      }
      const verdict = canStore(
        { method: 'GET', headers: requestHeaders },
        { status: answer.statusCode, headers: headersFromRaw(answer.fields), responseTimeMs: answer.responseTimeMs },
        route.policy,
      );
      const relayed = await relayAndCollect(answer.body, undefined, verdict.store ? this.deps.maxObjectBytes : 0);
      if (!verdict.store || !relayed.body) return 'not_stored';
      const draft = buildEntry({ key, requestHeaders, answer, route: route.label, policy: route.policy, omitFields: verdict.omitFields });
      return this.deps.cache.store(draft.complete(relayed.body)) === 'stored' ? 'stored' : 'not_stored';
    };
    this.backgroundRevalidations.run(`${key}\u0000${entry.variantKey}`, run).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, key }, 'background revalidation failed');
    });
  }

  /** RFC 9111 §4.3.4: stores the entry a 304 refreshed; undefined when it may no longer be stored. */
  private applyNotModified(entry: CacheEntry, answer: OriginAnswer, requestHeaders: HeaderLookup, route: CachingRoute): CacheEntry | undefined {
    const updated = entryFromNotModified(entry, answer.fields, requestHeaders, answer, route.policy);
    if (updated) this.deps.cache.store(updated);
    else this.deps.cache.delete(entry.key, entry.variantKey);
    return updated;
  }

  /**
   * The origin failed and nothing stale may stand in. RFC 9111 §5.2.2.2: an entry under
   * must-revalidate that cannot be revalidated gets a 504, whatever the failure was.
   */
  private failOrigin(exchange: Exchange, error: unknown, mustRevalidate: boolean): void {
    exchange.served('MISS', 'origin');
    sendUpstreamFailure(exchange, error, mustRevalidate ? { status: 504 } : {});
  }
}

/** The first value of a parsed response field (undici gives repeated lines as an array). */
function firstHeaderValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function originRequestOf(exchange: Exchange): OriginRequest {
  const { edge } = exchange;
  return { path: edge.pathAndQuery, rawHeaders: exchange.request.rawHeaders, forwarding: exchange.forwarding, clientAddress: edge.clientAddress, trace: exchange.trace };
}
