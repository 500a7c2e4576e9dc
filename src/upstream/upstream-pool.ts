// One configured pool (config `pools[]`): an undici keep-alive Pool per upstream, balanced round
// robin. An upstream whose connection fails is skipped for a cool-down (passive health checking, as
// nginx's max_fails/fail_timeout does) and the request moves on to the next one, which is safe
// because a refused connection never reached the origin.
import type { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { classifyUpstreamError, neverReachedOrigin, UpstreamError } from './upstream-error.js';
import { resetAwareConnector } from './reset-aware-connector.js';

export interface UpstreamPoolOptions {
  name: string;
  upstreams: readonly string[];
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  connections: number;
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
  signal?: AbortSignal;
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
  pool: Pool;
  skipUntilMs: number;
}

const DEFAULT_FAILURE_COOLDOWN_MS = 5_000;

export class UpstreamPool {
  readonly name: string;
  private readonly members: Member[];
  private cursor = 0;
  private readonly failureCooldownMs: number;
  private readonly now: () => number;

  constructor(options: UpstreamPoolOptions) {
    if (options.upstreams.length === 0) throw new Error(`pool ${options.name} has no upstreams`);
    this.name = options.name;
    this.failureCooldownMs = options.failureCooldownMs ?? DEFAULT_FAILURE_COOLDOWN_MS;
    this.now = options.now ?? Date.now;
    this.members = options.upstreams.map((origin) => ({
      origin,
      skipUntilMs: 0,
      pool: new Pool(origin, {
        connections: options.connections,
        connect: resetAwareConnector({ timeout: options.connectTimeoutMs }),
        headersTimeout: options.responseTimeoutMs,
        bodyTimeout: options.responseTimeoutMs,
      }),
    }));
  }

  /** Sends the request to the next healthy upstream, moving on while connections are refused. */
  async request(request: UpstreamRequest): Promise<UpstreamResponse> {
    let lastError: UpstreamError | undefined;
    const order = this.pickOrder();
    for (const member of request.body ? order.slice(0, 1) : order) {
      try {
        const response = await member.pool.request({
          method: request.method as Dispatcher.HttpMethod,
          path: request.path,
          headers: request.headers,
          body: request.body,
          signal: request.signal,
        });
        member.skipUntilMs = 0;
        return { statusCode: response.statusCode, headers: response.headers, body: response.body, origin: member.origin };
      } catch (error) {
        lastError = classifyUpstreamError(error, member.origin);
        if (!neverReachedOrigin(lastError)) throw lastError;
        member.skipUntilMs = this.now() + this.failureCooldownMs;
      }
    }
    throw lastError ?? new UpstreamError('upstream_error', `pool ${this.name} has no upstream`);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.pool.close()));
  }

  /** Healthy upstreams from the round-robin cursor on, then the skipped ones as a last resort. */
  private pickOrder(): Member[] {
    const start = this.cursor++ % this.members.length;
    const rotated = [...this.members.slice(start), ...this.members.slice(0, start)];
    const now = this.now();
    return [...rotated.filter((m) => m.skipUntilMs <= now), ...rotated.filter((m) => m.skipUntilMs > now)];
  }
}
