// Strong mode's peer fetch (spec §1.4; golang/groupcache's Group.load is the model): a request for a
// key another node owns is sent to that owner (POST /v1/peer/fetch), which answers from its tiers or
// fetches from the origin once, coalesced across the cluster. The asking node serves the answer with
// source "peer" and keeps no copy, so each object is held once in the cluster. If the owner cannot
// answer, the node fetches from the origin itself.
//
// On the asking node a peer fetch is a fill (src/fill/): concurrent plain requests for a key share one
// peer fetch, and the body streams from the owner in parts (peer-fetch-wire.ts) at the pace of the
// fill's readers, so neither node holds a large object for the other. An owner does not send objects
// larger than its max_object_bytes; the asker then goes to the origin, and keeps going there for the
// key for a while (svc_peer_fetch_refused_total{reason="too_large"}).
//
// The owner answers a plain request for a fresh entry straight from its tiers. Anything else (a miss,
// a stale entry, a conditional or range request) goes through its own data plane, over loopback, with
// a hop header that keeps the request there: the owner's cache flow (fills, storing, freshness,
// invalidation) stays the one code path, as a Varnish shard director forwards to the owning Varnish.
// Which owner to ask, for how long, and when to give up on it is peer-routing.ts's business.
import { Pool } from 'undici';
import type { RequestHandler, RequestOptions } from '../../cluster/index.js';
import type { CacheEntry } from '../cache/entry.js';
import { placementKey } from '../cache/policy/cache-key.js';
import { keyOfRequest } from '../edge/client-request.js';
import { HOP_BY_HOP_FIELDS } from '../http/hop-by-hop.js';
import { headersFromRaw, type HeaderLookup } from '../cache/policy/header-lookup.js';
import { storedFields } from '../proxy/stored-response.js';
import { SVC_FIELD_PREFIX } from '../fill/forward-headers.js';
import type { Exchange } from '../proxy/exchange.js';
import type { Fill, FillOpening } from '../fill/fill.js';
import { forwardedAnswerHead, forwardedResult } from '../fill/forwarded-answer.js';
import { HitForPassMarkers } from '../fill/hit-for-pass.js';
import { announcedLength } from '../fill/origin-opening.js';
import { PeerBodyStream } from './peer-body-stream.js';
import { bufferSource, PeerFetchStreams, readableSource, type PartSource } from './peer-fetch-streams.js';
import {
  decodePeerFetchAnswer,
  decodePeerFetchMessage,
  decodePeerFetchPart,
  encodePeerFetchAnswer,
  encodePeerFetchPart,
  encodePeerFetchPartRequest,
  encodePeerFetchRequest,
  PEER_FETCH_PART_BYTES,
  type PeerFetchAnswer,
  type PeerFetchPart,
  type PeerFetchRequest,
} from './peer-fetch-wire.js';
import { PEER_HOP_HEADER, type PeerRouting } from './peer-routing.js';
import type { Route } from '../proxy/cache-flow.js';

/** The channel of the peer-fetch RPC: `/v1/peer/fetch` on the UDP transport (spec §4.1). */
export const PEER_FETCH_CHANNEL = 'fetch';

/** Request fields that need the data plane's full handling (conditionals, ranges). */
const NEEDS_DATA_PLANE = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'range', 'if-range'];

/**
 * Streams an owner keeps open for asking nodes: each holds one part at most, and the owner's data plane
 * is reached through the local pool's connections, which bound the streams of misses anyway.
 */
const MAX_STREAMS = 256;
/** Keep-alive connections to this node's own data plane, for the peer fetches it answers through it. */
const LOCAL_CONNECTIONS = 64;

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
  /** The owner refused an object larger than its max_object_bytes; the asker went to the origin. */
  refusedTooLarge(): void;
  /** Seconds one peer fetch took to its head (or to its failure). */
  duration(seconds: number): void;
}

export interface PeerFetcherOptions {
  member: PeerFetchMember;
  /** Owner choice, the peer timeout (the longest a peer request, the head or one part, may take), and giving up on an owner that fails. */
  routing: PeerRouting;
  /** `hop_limit` (spec §2.3): nodes a request may visit looking for its key's owner. */
  hopLimit: number;
  /**
   * Where the owner side asks this node's own data plane for `key`: `http://host:port` of its
   * listener (known once bound), or `unix:<path>` of the socket of the key's home thread when the
   * data plane runs in several threads (src/proxy/home-routing.ts).
   */
  dataPlane: (key: string) => string;
  counters: PeerFetchCounters;
  /** The fresh entry that answers a plain request for a key as a HIT, if this node holds one. */
  freshEntry: (key: string, requestHeaders: HeaderLookup) => CacheEntry | undefined;
  now: () => number;
  /** This node's max_object_bytes: larger objects are not sent to peers. */
  maxObjectBytes: number;
  /** `client_write_idle_timeout`: an asker's fill pauses between parts at most about this long. */
  writeIdleTimeoutMs: number;
}

function flatten(headers: Record<string, string | string[] | undefined>): string[] {
  const fields: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP_FIELDS.has(name)) continue;
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
    // Nothing of svc's own (x-svc-…, the hop header among them): a node's internal fields stay in it.
    if (!HOP_BY_HOP_FIELDS.has(name) && name !== 'content-length' && !name.startsWith(SVC_FIELD_PREFIX)) fields.push(name, rawHeaders[i + 1]!);
  }
  return fields;
}

/** The request a node forwards to a key's owner for a client's request. */
function peerFetchRequestOf(exchange: Exchange): PeerFetchRequest {
  const { request } = exchange;
  return { method: request.method ?? 'GET', path: exchange.edge.pathAndQuery, headers: forwardable(request.rawHeaders), hops: 1 };
}

export class PeerFetcher {
  /** Keep-alive connections to this node's own data plane, by address, made on first use. */
  private readonly localPools = new Map<string, Pool>();
  private readonly streams: PeerFetchStreams;
  /** Keys whose owner refused them as too large: their requests go to the origin directly meanwhile. */
  private readonly refused = new HitForPassMarkers();
  private maxObjectBytes: number;

  constructor(private readonly options: PeerFetcherOptions) {
    this.maxObjectBytes = options.maxObjectBytes;
    // An asker pauses between parts while its readers push back, and cuts them after the write-idle
    // timeout: a stream idle for that long plus one peer timeout has been given up.
    this.streams = new PeerFetchStreams({
      maxStreams: MAX_STREAMS,
      idleMs: options.writeIdleTimeoutMs + options.routing.timeoutMs,
      partBytes: PEER_FETCH_PART_BYTES,
    });
  }

  /** Connections to this node's own data plane where it answers `key`. */
  private local(key: string): Pool {
    const address = this.options.dataPlane(key);
    let pool = this.localPools.get(address);
    if (pool === undefined) {
      pool = address.startsWith('unix:')
        ? new Pool('http://localhost', { socketPath: address.slice('unix:'.length), connections: LOCAL_CONNECTIONS })
        : new Pool(address, { connections: LOCAL_CONNECTIONS });
      this.localPools.set(address, pool);
    }
    return pool;
  }

  /** Serves `/v1/peer/fetch` for the other nodes. */
  /** The token that marks a request this node's owner side forwards to its own data plane (PeerRouting.hopToken). */
  get hopToken(): string {
    return this.options.routing.hopToken;
  }

  start(): void {
    this.options.member.handleRequest(PEER_FETCH_CHANNEL, (_from, body) => this.serve(body));
  }

  /** `max_object_bytes` changed (a configuration reload): objects asked for from now on are judged by it. */
  setMaxObjectBytes(bytes: number): void {
    this.maxObjectBytes = bytes;
  }

  async close(): Promise<void> {
    this.options.routing.close();
    this.streams.closeAll();
    await Promise.all([...this.localPools.values()].map((pool) => pool.close()));
  }

  /**
   * Routing, before the cache flow looks in the local tiers: to the member that owns `key` when another
   * node does and is alive; to the origin when that owner is suspect; here when this node is to answer
   * itself (it owns the key, or its own owner side forwarded the request to it).
   */
  route(exchange: Exchange, key: string): Route {
    // The owner keys what a peer forwards as http (the hop does not carry the scheme a trusted proxy
    // gave), so an https request is answered here rather than handed a copy of the http answer.
    if (exchange.edge.scheme !== 'http') return { kind: 'here' };
    const route = this.options.routing.route(placementKey(key), exchange.request.headers[PEER_HOP_HEADER]);
    // The owner is suspect: the origin answers, and this node, not owning the key, keeps no copy.
    if (route.kind === 'origin') this.options.counters.miss();
    return route;
  }

  /** Whether requests for `key` skip its owner for now: the owner refused the object as too large. */
  bypassesOwner(key: string): boolean {
    return this.refused.has(key, this.options.now());
  }

  /**
   * The opening of a fill that asks `owner` for `ask`. `shareable`: the request is plain, so an answer
   * the owner would cache may go to every reader of the fill. When the owner cannot answer or refuses,
   * `fallback` opens the fill on the origin instead.
   */
  openOnOwner(
    owner: string,
    exchange: Exchange,
    key: string,
    shareable: boolean,
    fallback: (fill: Fill) => Promise<FillOpening>,
  ): (fill: Fill) => Promise<FillOpening> {
    const ask = peerFetchRequestOf(exchange);
    return async (fill) => {
      const { counters } = this.options;
      const started = process.hrtime.bigint();
      // The span of the exchange that opens the fill; its trace context goes to the owner in `ask`.
      const span = exchange.trace?.peerFetch(owner, ask.headers);
      let answer: PeerFetchAnswer;
      const { routing } = this.options;
      const watch = routing.watch(owner);
      try {
        const bytes = await this.options.member.request(owner, PEER_FETCH_CHANNEL, encodePeerFetchRequest(ask), {
          timeoutMs: routing.timeoutMs,
          signal: watch.signal,
        });
        answer = decodePeerFetchAnswer(bytes);
      } catch (error) {
        watch.done();
        span?.failed(error);
        counters.duration(Number(process.hrtime.bigint() - started) / 1e9);
        counters.miss();
        // The owner cannot answer: the origin can. Not owning the key, this node keeps no copy.
        return fallback(fill);
      }
      watch.done();
      counters.duration(Number(process.hrtime.bigint() - started) / 1e9);
      if (answer.kind === 'refused') {
        span?.answered(413);
        counters.miss();
        counters.refusedTooLarge();
        this.refused.mark(key, this.options.now());
        return fallback(fill);
      }
      const more = answer.more;
      const length = ask.method === 'HEAD' ? 0 : announcedLength(headersFromRaw(answer.fields)('content-length'));
      const body = new PeerBodyStream((offset) => this.askPart(more!.node, more!.stream, offset), answer.body, more !== undefined, length);
      span?.answered(answer.status, { body });
      return this.opening(answer, body, ask, shareable);
    };
  }

  /** A peer's answer as the asking node's fill opens on it. */
  private opening(answer: Extract<PeerFetchAnswer, { kind: 'answer' }>, body: PeerBodyStream, ask: PeerFetchRequest, shareable: boolean): FillOpening {
    const { counters } = this.options;
    const cacheResult = forwardedResult(answer.fields);
    if (cacheResult === 'MISS' || cacheResult === 'BYPASS') counters.miss();
    else counters.hit();
    const head = forwardedAnswerHead(answer.status, answer.fields, ask.headers, shareable, this.options.now());
    return {
      kind: 'answer',
      head: { ...head, countedAs: [cacheResult, 'peer'] },
      body,
      announcedBytes: ask.method === 'HEAD' ? undefined : announcedLength(headersFromRaw(answer.fields)('content-length')),
      closeDelimited: false,
      complete: undefined,
    };
  }

  private async askPart(node: string, stream: string, offset: number): Promise<PeerFetchPart> {
    const bytes = await this.options.member.request(node, PEER_FETCH_CHANNEL, encodePeerFetchPartRequest({ stream, offset }), {
      timeoutMs: this.options.routing.timeoutMs,
    });
    return decodePeerFetchPart(bytes);
  }

  /** The owner side of `/v1/peer/fetch`: an opening request, or the next part of a stream. */
  private async serve(body: Uint8Array): Promise<Uint8Array> {
    const message = decodePeerFetchMessage(body);
    if (message.kind === 'part') return encodePeerFetchPart(await this.streams.part(message.stream, message.offset));
    return this.answer(message);
  }

  /** Forwards while another node owns the key and hops remain, else answers here. */
  private async answer(ask: PeerFetchRequest): Promise<Uint8Array> {
    const { member, hopLimit, counters } = this.options;
    const host = ask.headers[ask.headers.indexOf('host') + 1] ?? '';
    const key = keyOfRequest('http', host, ask.path);
    const owner = key === undefined ? undefined : member.ring.owner(placementKey(key));
    if (owner !== undefined && owner !== member.localMember.name) {
      if (ask.hops < hopLimit) {
        // Views of the ring differ for a moment while membership changes: pass it on to the owner.
        // Its answer names the member that holds the rest of the body, so it goes back unchanged.
        return member.request(owner, PEER_FETCH_CHANNEL, encodePeerFetchRequest({ ...ask, hops: ask.hops + 1 }), {
          timeoutMs: this.options.routing.timeoutMs,
        });
      }
      counters.hopLimit();
    }
    const requestHeaders = headersFromRaw(ask.headers);
    if (key !== undefined && NEEDS_DATA_PLANE.every((name) => requestHeaders(name) === undefined)) {
      const entry = this.options.freshEntry(key, requestHeaders);
      if (entry) {
        const fields = storedFields(entry, 'HIT', this.options.now());
        if (ask.method === 'HEAD') return this.firstPart(entry.status, fields, bufferSource(new Uint8Array(0), 0));
        return this.firstPart(entry.status, fields, bufferSource(entry.body, 0));
      }
    }
    const answer = await this.local(key ?? '').request({
      method: ask.method as 'GET' | 'HEAD',
      path: ask.path,
      headers: [...ask.headers, PEER_HOP_HEADER, this.options.routing.hopToken],
      headersTimeout: this.options.routing.timeoutMs,
      bodyTimeout: this.options.writeIdleTimeoutMs + this.options.routing.timeoutMs,
    });
    const announced = announcedLength(answer.headers['content-length']);
    if (ask.method !== 'HEAD' && announced !== undefined && announced > this.maxObjectBytes) {
      answer.body.destroy();
      return encodePeerFetchAnswer({ kind: 'refused', reason: 'too_large' });
    }
    // Half the peer timeout for the data of a part: the asker's request for it never times out.
    const length = ask.method === 'HEAD' ? 0 : announced;
    return this.firstPart(answer.statusCode, flatten(answer.headers), readableSource(answer.body, this.options.routing.timeoutMs / 2, length));
  }

  /** The head and the first part of a body; the rest, if any, stays open as a stream for the asker. */
  private async firstPart(status: number, fields: string[], source: PartSource): Promise<Uint8Array> {
    let part: PeerFetchPart;
    try {
      part = await source.next(PEER_FETCH_PART_BYTES);
    } catch (error) {
      source.close();
      throw error;
    }
    if (!part.more) {
      // Whole in one part: a body read up to its announced length may not have seen its end yet.
      source.close();
      return encodePeerFetchAnswer({ kind: 'answer', status, fields, body: part.body, more: undefined });
    }
    const stream = this.streams.open(source, part.body.length);
    if (stream === undefined) {
      // Every stream is taken: the asker goes to the origin rather than wait.
      source.close();
      throw new Error('no peer-fetch stream free');
    }
    return encodePeerFetchAnswer({ kind: 'answer', status, fields, body: part.body, more: { stream, node: this.options.member.localMember.name } });
  }
}
