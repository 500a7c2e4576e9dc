// Strong mode's peer fetch (spec §1.4; golang/groupcache's Group.load is the model): a request for a
// key another node owns is sent to that owner (POST /v1/peer/fetch), which answers from its tiers or
// fetches from the origin once, coalesced across the cluster. The asking node serves the answer with
// source "peer" and keeps no copy, so each object is held once in the cluster. If the owner cannot
// answer, the node fetches from the origin itself.
//
// The owner answers a plain request for a fresh entry straight from its tiers. Anything else (a miss,
// a stale entry, a conditional or range request) goes through its own data plane, over loopback, with
// a hop header that keeps the request there: the owner's cache flow (coalescing, storing, freshness,
// invalidation) stays the one code path, as a Varnish shard director forwards to the owning Varnish.
import { Pool } from 'undici';
import type { RequestHandler, RequestOptions } from '../../cluster/index.js';
import type { CacheResult } from '../observe/metrics.js';
import type { CacheEntry } from '../cache/entry.js';
import { primaryKey, STORED_SCHEME } from '../cache/policy/cache-key.js';
import { headersFromRaw, type HeaderLookup } from '../cache/policy/header-lookup.js';
import { storedFields } from '../proxy/stored-response.js';
import type { CachingRoute } from '../proxy/cache-flow.js';
import type { Exchange } from '../proxy/exchange.js';
import { passThrough } from '../proxy/pass-through.js';
import type { FillLayer } from '../fill/fill-layer.js';
import { decodePeerFetchAnswer, decodePeerFetchRequest, encodePeerFetchAnswer, encodePeerFetchRequest, type PeerFetchRequest } from './peer-fetch-wire.js';

/** The channel of the peer-fetch RPC: `/v1/peer/fetch` on the UDP transport (spec §4.1). */
export const PEER_FETCH_CHANNEL = 'fetch';

/**
 * Carries the hop count of a request a peer forwarded; a data plane that sees it serves the request
 * itself. Only how a request is routed depends on it, never what is served.
 */
export const PEER_HOP_HEADER = 'x-svc-peer-hop';

/** Fields never forwarded between nodes: they describe one connection (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

const CACHE_RESULTS = new Set<CacheResult>(['HIT', 'MISS', 'STALE', 'BYPASS', 'REVALIDATED']);

export interface PeerFetchMember {
  readonly localMember: { readonly name: string };
  readonly ring: { owner(key: string): string | undefined };
  request(member: string, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  handleRequest(channel: string, handler: RequestHandler): void;
}

export interface PeerFetchCounters {
  /** The owner answered from its cache. */
  hit(): void;
  /** The owner had to go to the origin (or could not answer). */
  miss(): void;
  /** A request reached `hop_limit` on a node that did not own its key. */
  hopLimit(): void;
  /** Seconds one peer fetch took, answered or not. */
  duration(seconds: number): void;
}

export interface PeerFetcherOptions {
  member: PeerFetchMember;
  /** `hop_limit` (spec §2.3): nodes a request may visit looking for its key's owner. */
  hopLimit: number;
  /** Longest a peer fetch may take: the owner may have to go to the origin. */
  timeoutMs: number;
  /** This node's own data plane, `http://host:port`, where the owner side serves; known once bound. */
  dataPlaneUrl: () => string;
  counters: PeerFetchCounters;
  /** The fresh entry that answers a plain request for a key as a HIT, if this node holds one. */
  freshEntry: (key: string, requestHeaders: HeaderLookup) => CacheEntry | undefined;
  now: () => number;
  /** The node's fill layer: the fall-back to the origin streams through it. */
  fills: FillLayer;
}

/** Request fields that need the data plane's full handling (conditionals, ranges). */
const NEEDS_DATA_PLANE = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'range', 'if-range'];

function flatten(headers: Record<string, string | string[] | undefined>): string[] {
  const fields: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    if (Array.isArray(value)) for (const line of value) fields.push(name, line);
    else fields.push(name, value);
  }
  return fields;
}

/** A forwarded GET or HEAD has no body, so no framing either. */
function forwardable(rawHeaders: readonly string[]): string[] {
  const fields: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && name !== 'content-length' && name !== PEER_HOP_HEADER) fields.push(name, rawHeaders[i + 1]!);
  }
  return fields;
}

/**
 * The fields the asking node sends its client. It owns the framing: a HEAD keeps the owner's
 * Content-Length (the length of the GET body), anything else gets the length of the body it carries.
 */
function clientFields(fields: readonly string[], method: string, status: number, bodyLength: number): string[] {
  if (method === 'HEAD') return fields.slice();
  const kept: string[] = [];
  for (let i = 0; i < fields.length; i += 2) if (fields[i] !== 'content-length') kept.push(fields[i]!, fields[i + 1]!);
  if (status !== 204 && status !== 304) kept.push('content-length', String(bodyLength));
  return kept;
}

export class PeerFetcher {
  private localPool: Pool | undefined;

  constructor(private readonly options: PeerFetcherOptions) {}

  /** Keep-alive connections to this node's own data plane, made on the first peer fetch served. */
  private get local(): Pool {
    this.localPool ??= new Pool(this.options.dataPlaneUrl(), { connections: 32 });
    return this.localPool;
  }

  /** Serves `/v1/peer/fetch` for the other nodes. */
  start(): void {
    this.options.member.handleRequest(PEER_FETCH_CHANNEL, (_from, body) => this.answer(decodePeerFetchRequest(body)));
  }

  async close(): Promise<void> {
    await this.localPool?.close();
  }

  /**
   * For the cache flow, before it looks in the local tiers: the promise of answering `exchange` from
   * the key's owner, or undefined when this node is to answer itself (it owns the key, or the request
   * was forwarded here by a peer).
   */
  route(exchange: Exchange, key: string, route: CachingRoute): Promise<unknown> | undefined {
    if (exchange.request.headers[PEER_HOP_HEADER] !== undefined) return undefined;
    const owner = this.options.member.ring.owner(key);
    if (owner === undefined || owner === this.options.member.localMember.name) return undefined;
    return this.fetchFromOwner(exchange, owner, route);
  }

  private async fetchFromOwner(exchange: Exchange, owner: string, route: CachingRoute): Promise<void> {
    const { request, response } = exchange;
    const { counters } = this.options;
    const started = process.hrtime.bigint();
    const ask: PeerFetchRequest = { method: request.method ?? 'GET', path: request.url ?? '/', headers: forwardable(request.rawHeaders), hops: 1 };
    let bytes: Uint8Array;
    try {
      bytes = await this.options.member.request(owner, PEER_FETCH_CHANNEL, encodePeerFetchRequest(ask), { timeoutMs: this.options.timeoutMs });
    } catch {
      counters.duration(Number(process.hrtime.bigint() - started) / 1e9);
      counters.miss();
      // The owner cannot answer: the origin can. Not owning the key, this node keeps no copy.
      await passThrough(this.options.fills, route.pool, exchange, request, 'MISS');
      return;
    }
    counters.duration(Number(process.hrtime.bigint() - started) / 1e9);
    const answer = decodePeerFetchAnswer(bytes);
    const xCache = answer.fields[answer.fields.indexOf('x-cache') + 1] as CacheResult | undefined;
    const cacheResult: CacheResult = xCache !== undefined && CACHE_RESULTS.has(xCache) ? xCache : 'MISS';
    if (cacheResult === 'MISS' || cacheResult === 'BYPASS') counters.miss();
    else counters.hit();
    exchange.served(cacheResult, 'peer');
    response.writeHead(answer.status, clientFields(answer.fields, request.method ?? 'GET', answer.status, answer.body.length));
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    exchange.bytesOut += answer.body.length;
    response.end(answer.body);
  }

  /** The owner side: forward while another node owns the key and hops remain, else serve here. */
  private async answer(ask: PeerFetchRequest): Promise<Uint8Array> {
    const { member, hopLimit, counters } = this.options;
    const host = ask.headers[ask.headers.indexOf('host') + 1] ?? '';
    const owner = member.ring.owner(primaryKey(STORED_SCHEME, host, ask.path));
    if (owner !== undefined && owner !== member.localMember.name) {
      if (ask.hops < hopLimit) {
        // Views of the ring differ for a moment while membership changes: pass it on to the owner.
        return member.request(owner, PEER_FETCH_CHANNEL, encodePeerFetchRequest({ ...ask, hops: ask.hops + 1 }), {
          timeoutMs: this.options.timeoutMs,
        });
      }
      counters.hopLimit();
    }
    const requestHeaders = headersFromRaw(ask.headers);
    if (NEEDS_DATA_PLANE.every((name) => requestHeaders(name) === undefined)) {
      const entry = this.options.freshEntry(primaryKey(STORED_SCHEME, host, ask.path), requestHeaders);
      if (entry) {
        const body = ask.method === 'HEAD' ? new Uint8Array(0) : entry.body;
        return encodePeerFetchAnswer({ status: entry.status, fields: storedFields(entry, 'HIT', this.options.now()), body });
      }
    }
    const answer = await this.local.request({
      method: ask.method as 'GET' | 'HEAD',
      path: ask.path,
      headers: [...ask.headers, PEER_HOP_HEADER, String(ask.hops)],
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
    });
    const body = new Uint8Array(await answer.body.arrayBuffer());
    return encodePeerFetchAnswer({ status: answer.statusCode, fields: flatten(answer.headers), body });
  }
}
