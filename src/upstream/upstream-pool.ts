// One configured pool (config `pools[]`): undici keep-alive Pools per upstream, balanced round robin.
// An upstream whose connection fails is skipped for a cool-down (passive health checking, as
// nginx's max_fails/fail_timeout does) and the request moves on to the next one, which is safe
// because a refused connection never reached the origin.
//
// Requests with a body (uploads) use connections of their own (`upload_connections`), so clients
// sending slowly can only exhaust those, never the ones cache fills use. A request is sent only once
// one of its upstream's connections is free (connection-slots.ts); one that waits longer than
// `queue_timeout` gets 504, and a client already holding `max_in_flight_per_client` origin requests
// gets 429 (client-budget.ts).
import type { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { classifyUpstreamError, neverReachedOrigin, UpstreamError } from './upstream-error.js';
import { ConnectionSlots, SlotsTimeoutError } from './connection-slots.js';
import type { ClientBudget } from './client-budget.js';
import type { SharedCounters } from '../shared-memory/shared-counters.js';
import type { RequestTrace } from '../observe/tracing/request-trace.js';
import { resetAwareConnector } from './reset-aware-connector.js';

export interface UpstreamPoolOptions {
  name: string;
  upstreams: readonly string[];
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Connections per upstream for requests without a body (cache fills, revalidations, GETs). */
  connections: number;
  /** Connections per upstream for requests with a body. */
  uploadConnections: number;
  /** Longest a request waits for a free connection before it fails with 504. */
  queueTimeoutMs: number;
  /** The per-client bound shared by every pool; none when absent. */
  clientBudget?: ClientBudget | undefined;
  /** The node's count of requests in flight on each upstream's connections (shared by its threads). */
  connectionCounts: SharedCounters;
  /** How long a failed upstream is skipped. 5 s: long enough to stop hammering a dead origin, short
   * enough that a restarted one is back within a few requests. */
  failureCooldownMs?: number;
  now?: () => number;
}

export interface UpstreamRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  /** A request body (unsafe methods). Such a request is sent to one upstream only: a body stream
   * cannot be replayed to the next one. */
  body?: Readable | undefined;
  /** The client whose budget this request counts against; '' or absent for svc's own requests. */
  clientAddress?: string | undefined;
  signal?: AbortSignal;
  /** Told of each informational (1xx) answer that comes before the final one (RFC 9110 §15.2). */
  onInformational?: ((info: { statusCode: number; headers: Record<string, string | string[]> }) => void) | undefined;
  /** The trace of the client request this fetch is for: the fetch is its `svc.origin` span. */
  trace?: RequestTrace | undefined;
}

export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** The upstream that answered, `scheme://host:port`. */
  origin: string;
}

interface Member {
  origin: string;
  fills: Pool;
  uploads: Pool;
  skipUntilMs: number;
}

const DEFAULT_FAILURE_COOLDOWN_MS = 5_000;

const NOTHING = (): void => undefined;

export class UpstreamPool {
  readonly name: string;
  private readonly members: Member[];
  private cursor = 0;
  private readonly failureCooldownMs: number;
  private readonly queueTimeoutMs: number;
  private readonly clientBudget: ClientBudget | undefined;
  private readonly now: () => number;
  private readonly fillSlots: ConnectionSlots<Member>;
  private readonly uploadSlots: ConnectionSlots<Member>;

  constructor(options: UpstreamPoolOptions) {
    if (options.upstreams.length === 0) throw new Error(`pool ${options.name} has no upstreams`);
    this.name = options.name;
    this.failureCooldownMs = options.failureCooldownMs ?? DEFAULT_FAILURE_COOLDOWN_MS;
    this.queueTimeoutMs = options.queueTimeoutMs;
    this.clientBudget = options.clientBudget;
    this.now = options.now ?? Date.now;
    const slotName = (kind: string) => (member: Member): string => `${options.name}\u0000${member.origin}\u0000${kind}`;
    this.fillSlots = new ConnectionSlots(options.connectionCounts, options.connections, slotName('fills'));
    this.uploadSlots = new ConnectionSlots(options.connectionCounts, options.uploadConnections, slotName('uploads'));
    const poolOf = (origin: string, connections: number): Pool =>
      new Pool(origin, {
        connections,
        connect: resetAwareConnector({ timeout: options.connectTimeoutMs }),
        headersTimeout: options.responseTimeoutMs,
        bodyTimeout: options.responseTimeoutMs,
      });
    this.members = options.upstreams.map((origin) => ({
      origin,
      skipUntilMs: 0,
      fills: poolOf(origin, options.connections),
      uploads: poolOf(origin, options.uploadConnections),
    }));
  }

  /** Sends the request to the next healthy upstream with a free connection, moving on while connections are refused. */
  async request(request: UpstreamRequest): Promise<UpstreamResponse> {
    const span = request.trace?.origin({ method: request.method, path: request.path, pool: this.name, headers: request.headers });
    try {
      const response = await this.send(request);
      span?.answered(response.statusCode, { upstream: response.origin, body: response.body });
      return response;
    } catch (error) {
      span?.failed(error);
      throw error;
    }
  }

  private async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const endClient = this.clientBudget === undefined ? NOTHING : this.clientBudget.take(request.clientAddress ?? '');
    if (endClient === undefined) {
      throw new UpstreamError('client_busy', `client ${request.clientAddress} has too many origin requests in flight`);
    }
    const upload = request.body !== undefined;
    const slots = upload ? this.uploadSlots : this.fillSlots;
    let candidates = this.pickOrder();
    if (upload) candidates = candidates.slice(0, 1);
    let lastError: UpstreamError | undefined;
    try {
      while (candidates.length > 0) {
        let member: Member;
        try {
          member = await slots.take(candidates, this.queueTimeoutMs, request.signal);
        } catch (error) {
          if (!(error instanceof SlotsTimeoutError)) throw error;
          throw new UpstreamError('upstream_busy', `pool ${this.name}: ${error.message}`, { cause: error });
        }
        candidates = candidates.filter((candidate) => candidate !== member);
        try {
          const response = await (upload ? member.uploads : member.fills).request({
            method: request.method as Dispatcher.HttpMethod,
            path: request.path,
            headers: request.headers,
            body: request.body,
            signal: request.signal,
            onInfo: request.onInformational,
          });
          member.skipUntilMs = 0;
          // The connection stays taken until the answer's body is read or dropped and, for an
          // upload, until the request body is sent: an origin may answer before it has read it all.
          const end = after(request.body === undefined ? 1 : 2, () => {
            slots.release(member);
            endClient();
          });
          response.body.once('close', end);
          if (request.body !== undefined) {
            if (request.body.closed) end();
            else request.body.once('close', end);
          }
          return { statusCode: response.statusCode, headers: response.headers, body: response.body, origin: member.origin };
        } catch (error) {
          slots.release(member);
          lastError = classifyUpstreamError(error, member.origin);
          if (!neverReachedOrigin(lastError)) throw lastError;
          member.skipUntilMs = this.now() + this.failureCooldownMs;
        }
      }
    } catch (error) {
      endClient();
      throw error;
    }
    endClient();
    throw lastError ?? new UpstreamError('upstream_error', `pool ${this.name} has no upstream`);
  }

  /**
   * Closes every connection once the requests on it are done. With `graceMs`, the requests still
   * running after it are cut: a node that stops must end whatever an origin does (a fill nobody reads
   * any more may otherwise read a trickling body for as long as the origin sends it).
   */
  async close(graceMs?: number): Promise<void> {
    const dispatchers = this.members.flatMap((member) => [member.fills, member.uploads]);
    const cut = graceMs === undefined ? undefined : setTimeout(() => dispatchers.forEach((dispatcher) => void dispatcher.destroy()), graceMs);
    try {
      await Promise.all(dispatchers.map((dispatcher) => dispatcher.close()));
    } finally {
      clearTimeout(cut);
    }
  }

  /** Healthy upstreams from the round-robin cursor on, then the skipped ones as a last resort. */
  private pickOrder(): Member[] {
    const start = this.cursor++ % this.members.length;
    const rotated = [...this.members.slice(start), ...this.members.slice(0, start)];
    const now = this.now();
    return [...rotated.filter((m) => m.skipUntilMs <= now), ...rotated.filter((m) => m.skipUntilMs > now)];
  }
}

/** A function that runs `action` on its `count`-th call, and never again. */
function after(count: number, action: () => void): () => void {
  let left = count;
  return () => {
    left--;
    if (left === 0) action();
  };
}
