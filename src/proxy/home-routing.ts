// Node-wide coalescing (DESIGN principle 14): each key has a home among the node's data-plane
// threads, the hash of the key modulo the threads (the ring, inside the node). A thread that misses
// on a key whose home is another hands the request to the home over a Unix socket of the home's
// (`worker-<slot>.sock` in the node's own 0700 directory); the home answers it as a single process
// would, its fills coalescing every thread's misses, and stores what it fetched in the hot tier every
// thread shares. So a cold object costs the origin one request per node however many threads serve,
// as one busy object per node does in Varnish.
//
// The handing thread keeps a fill of its own over the home's answer, so that its own clients asking
// meanwhile join it. The home counts the request (metrics, access log) with the client's own details,
// which travel with it (EDGE_HEADER): each client request is counted once, where it was answered.
// When the home cannot be reached (it is starting again) the thread answers the miss itself.
import { Pool } from 'undici';
import { join } from 'node:path';
import * as v from 'valibot';
import { timingSafeEqual } from 'node:crypto';
import { keyHash } from '../shared-memory/key-hash.js';
import { HOP_BY_HOP_FIELDS } from '../http/hop-by-hop.js';
import type { EdgeRequest } from '../edge/client-request.js';
import { forwardedAnswerHead, forwardedResult } from '../fill/forwarded-answer.js';
import { announcedLength } from '../fill/origin-opening.js';
import type { Fill, FillOpening } from '../fill/fill.js';
import type { CacheResult, Source } from '../observe/metrics.js';
import type { Exchange } from './exchange.js';
import { isPseudoField, responseFieldsFromOrigin, SVC_FIELD_PREFIX } from '../fill/forward-headers.js';
import { relayInformational } from './informational.js';
import { tlsFieldsOf } from '../tls/tls-fields.js';
import { protocolOf, type IncomingRequest } from '../http/server-messages.js';
import { connectionOf, remoteOf } from '../edge/client-connection.js';

/** Carries the node's internal token: a request with it was handed over by a sibling thread. */
export const SIBLING_HEADER = 'x-svc-sibling';
/** The client request as the handing thread read it (JSON of HandedEdge). */
export const EDGE_HEADER = 'x-svc-edge';

/** Keep-alive connections from a thread to each sibling: bounded like a pool's, enough for its misses. */
const SIBLING_CONNECTIONS = 64;

const EdgeShape = v.object({
  scheme: v.picklist(['http', 'https']),
  authority: v.object({ host: v.string(), port: v.optional(v.number()) }),
  host: v.string(),
  pathAndQuery: v.string(),
  path: v.string(),
  key: v.string(),
  peerAddress: v.string(),
  clientAddress: v.string(),
  forwardedFor: v.optional(v.string()),
  forwarded: v.optional(v.string()),
  /** `address:port` of the client's connection, for the access log. */
  remote: v.string(),
  /** `HTTP/1.x` or `HTTP/2.0`: the protocol of the client's request. */
  proto: v.string(),
  /** The TLS of the client's connection, for the access log; absent for plain HTTP. */
  tls: v.optional(v.object({ tls_version: v.string(), tls_cipher: v.string(), tls_alpn: v.string() })),
});
export type HandedEdge = v.InferOutput<typeof EdgeShape>;

/** In a data-plane thread: which requests it answers itself, and how it hands the rest to their home. */
export interface HomeRouting {
  /** Whether this thread answers `key`'s misses: it is the key's home, or the request was handed to it. */
  isHome(key: string, exchange: Exchange): boolean;
  /**
   * The opening of a fill that hands the exchange's request to the key's home thread. `shareable`: the
   * request is plain, so the answer may go to every reader of the fill. `fallback` opens it here when
   * the home cannot be reached.
   */
  openAtHome(exchange: Exchange, key: string, shareable: boolean, fallback: (fill: Fill) => Promise<FillOpening>): (fill: Fill) => Promise<FillOpening>;
  /**
   * Hands the request to the key's home thread for what answering it does there (a stale entry's
   * background revalidation), after this thread answered the client itself; the home's answer is
   * dropped, and the home counts the request.
   */
  nudge(exchange: Exchange, key: string): void;
}

export interface SiblingRoutingOptions {
  /** This thread's slot, 0 to workers - 1. */
  slot: number;
  workers: number;
  /** The directory of the node's sibling sockets. */
  directory: string;
  /** The node's internal token (128 random bits, fresh for each run). */
  token: string;
  /** Longest wait for the home's head and between its body's parts: the pools' response timeout. */
  timeoutMs: number;
  now: () => number;
}

/** The slot of `key`'s home thread among `threads`. */
export function homeThreadOf(key: string, threads: number): number {
  return (keyHash(key) >>> 0) % threads;
}

/** The socket a thread listens on for what its siblings hand it. */
export function siblingSocket(directory: string, slot: number): string {
  return join(directory, `worker-${slot}.sock`);
}

/** A fill's head said how the home served the request; the source follows from it. */
function sourceOf(result: CacheResult): Source {
  return result === 'HIT' || result === 'STALE' ? 'hot' : 'origin';
}

export class SiblingRouting implements HomeRouting {
  readonly #options: SiblingRoutingOptions;
  readonly #pools = new Map<number, Pool>();
  readonly #token: Buffer;

  constructor(options: SiblingRoutingOptions) {
    this.#options = options;
    this.#token = Buffer.from(options.token);
  }

  /** The slot of `key`'s home thread. */
  homeOf(key: string): number {
    return homeThreadOf(key, this.#options.workers);
  }

  isHome(key: string, exchange: Exchange): boolean {
    return exchange.handedOver || this.homeOf(key) === this.#options.slot;
  }

  openAtHome(exchange: Exchange, key: string, shareable: boolean, fallback: (fill: Fill) => Promise<FillOpening>): (fill: Fill) => Promise<FillOpening> {
    const handing = this.#handing(exchange, key);
    const method = handing.method;
    const fields = handing.fields;
    return async (fill) => {
      let answer: Awaited<ReturnType<Pool['request']>>;
      try {
        answer = await handing.send();
      } catch {
        // The home is starting again, or gone: this thread answers itself.
        return fallback(fill);
      }
      // The home counts this request, with the client's details; this thread must not count it again.
      exchange.handedToHome();
      const answerFields = responseFieldsFromOrigin(answer.headers);
      const result = forwardedResult(answerFields);
      const head = forwardedAnswerHead(answer.statusCode, answerFields, fields, shareable, this.#options.now());
      return {
        kind: 'answer',
        head: { ...head, firstReaderAs: [result, sourceOf(result)] },
        body: answer.body,
        announcedBytes: method === 'HEAD' ? undefined : announcedLength(answer.headers['content-length']),
        closeDelimited: false,
        complete: undefined,
      };
    };
  }

  nudge(exchange: Exchange, key: string): void {
    exchange.handedToHome();
    this.#handing(exchange, key)
      .send()
      .then(
        (answer) => answer.body.resume(),
        // The home is starting again: the entry is revalidated by the next request that finds it stale.
        () => undefined,
      );
  }

  /** The request as it goes to the key's home: the client's fields and edge, with the node's token. */
  #handing(exchange: Exchange, key: string): { method: 'GET' | 'HEAD'; fields: string[]; send: () => ReturnType<Pool['request']> } {
    const home = this.homeOf(key);
    const { request } = exchange;
    const method = request.method === 'HEAD' ? 'HEAD' : 'GET';
    const fields = handedFields(request.rawHeaders);
    const socket = connectionOf(request);
    const edge: HandedEdge = {
      ...exchange.edge,
      remote: remoteOf(socket),
      proto: protocolOf(request),
      tls: tlsFieldsOf(socket),
    };
    const headers = [...fields, SIBLING_HEADER, this.#options.token, EDGE_HEADER, JSON.stringify(edge)];
    return {
      method,
      fields,
      send: () =>
        this.#pool(home).request({
          method,
          path: exchange.edge.pathAndQuery,
          headers,
          headersTimeout: this.#options.timeoutMs,
          bodyTimeout: this.#options.timeoutMs,
          // The origin's 1xx answers reach the home's client, that is, this thread: passed on to the client.
          onInfo: relayInformational(exchange),
        }),
    };
  }

  /**
   * A request on this thread's internal listener: handed over by a sibling (the token, and the
   * client's edge as the sibling read it), else undefined (a request the main thread forwards for a
   * peer, read as any request is). Anything else is refused there.
   */
  handedEdge(request: IncomingRequest): HandedEdge | 'refused' | undefined {
    const token = request.headers[SIBLING_HEADER];
    if (token === undefined) return undefined;
    if (typeof token !== 'string' || token.length !== this.#token.length || !timingSafeEqual(Buffer.from(token), this.#token)) return 'refused';
    const raw = request.headers[EDGE_HEADER];
    if (typeof raw !== 'string') return 'refused';
    try {
      const parsed = v.safeParse(EdgeShape, JSON.parse(raw));
      return parsed.success ? parsed.output : 'refused';
    } catch {
      return 'refused';
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
  }

  #pool(slot: number): Pool {
    let pool = this.#pools.get(slot);
    if (pool === undefined) {
      pool = new Pool('http://localhost', { socketPath: siblingSocket(this.#options.directory, slot), connections: SIBLING_CONNECTIONS });
      this.#pools.set(slot, pool);
    }
    return pool;
  }
}

/**
 * The client's fields as the home gets them: no hop-by-hop field, no framing, nothing of svc's, no
 * HTTP/2 pseudo-header (the edge it carries names the authority and scheme).
 */
function handedFields(rawHeaders: readonly string[]): string[] {
  const fields: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!HOP_BY_HOP_FIELDS.has(name) && name !== 'content-length' && !name.startsWith(SVC_FIELD_PREFIX) && !isPseudoField(name)) fields.push(name, rawHeaders[i + 1]!);
  }
  return fields;
}

/** The edge a handed-over request carries, as the data plane reads it. */
export function edgeOfHanded(edge: HandedEdge): EdgeRequest {
  return {
    scheme: edge.scheme,
    authority: { host: edge.authority.host, port: edge.authority.port },
    host: edge.host,
    pathAndQuery: edge.pathAndQuery,
    path: edge.path,
    key: edge.key,
    peerAddress: edge.peerAddress,
    clientAddress: edge.clientAddress,
    forwardedFor: edge.forwardedFor,
    forwarded: edge.forwarded,
  };
}
