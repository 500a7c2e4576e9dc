// The client side of the reliable path: HTTP/1.1 POSTs with undici to `/v1/peer/<channel>` on the
// peer. One keep-alive Pool per peer, closed after it has been idle for a while. In-flight requests
// per peer are bounded by the pool's connections (pipelining 1); beyond that undici queues them, and
// every queued request is still bounded by its own timeout and AbortSignal.

import { Pool } from 'undici';
import { TransportError, type Address, type RequestOptions, type TransportErrorCode } from '../../cluster/transport.js';
import { announcedLength, readBody } from '../shared/read-body.js';
import { parseAddress } from './address.js';
import { requestErrorCode } from './request-error-code.js';
import { channelPath, FROM_HEADER } from './peer-paths.js';
import type { TlsMaterial } from './tls-material.js';

export interface PeerClientOptions {
  /** This node's transport address, sent so the peer's handler knows who asks. */
  readonly localAddress: () => Address;
  readonly tls: TlsMaterial | null;
  readonly connectionsPerPeer: number;
  readonly connectTimeoutMs: number;
  readonly idlePoolTimeoutMs: number;
  readonly maxResponseBodyBytes: number;
}

/** How much of an error answer is read to put in the error message. */
const ERROR_TEXT_MAX_BYTES = 512;

/** Server keep-alive is longer (peer-server.ts), so the client always closes an idle socket first. */
const KEEP_ALIVE_TIMEOUT_MS = 30_000;

interface PeerPool {
  readonly pool: Pool;
  inFlight: number;
  lastUsedMs: number;
}

export class PeerClient {
  private readonly pools = new Map<Address, PeerPool>();
  /** Every request in flight, by the function that fails it with a code of the caller's choosing. */
  private readonly active = new Set<(code: TransportErrorCode) => void>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: PeerClientOptions) {}

  async request(to: Address, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    if (this.closed) throw new TransportError('closed', `transport is stopped; request to ${to} on ${channel} not sent`);
    if (options.signal?.aborted === true) throw new TransportError('aborted', `request to ${to} on ${channel} was aborted`);
    let peer: PeerPool;
    try {
      peer = this.pool(to);
    } catch (error) {
      throw new TransportError('unreachable', `cannot reach ${to}: not a host:port address`, { cause: error });
    }
    const controller = new AbortController();
    let cause: TransportErrorCode | null = null;
    // undici settles a request that still waits for a connection only once connected, so the
    // caller's timeout, abort and stop settle this promise themselves, at once.
    let stopped!: (code: TransportErrorCode) => void;
    const stopping = new Promise<never>((_resolve, reject) => {
      stopped = (code) => reject(this.failure(code, to, channel, options.timeoutMs, null));
    });
    const stop = (code: TransportErrorCode): void => {
      if (cause !== null) return;
      cause = code;
      controller.abort();
      stopped(code);
    };
    const onAbort = (): void => stop('aborted');
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.active.add(stop);
    peer.inFlight++;
    const exchange = this.exchange(peer.pool, to, channel, body, controller.signal);
    // Whichever loses the race below must not surface as an unhandled rejection.
    exchange.catch(() => undefined);
    stopping.catch(() => undefined);
    try {
      return await Promise.race([exchange, stopping]);
    } catch (error) {
      if (error instanceof TransportError) throw error;
      throw this.failure(cause, to, channel, options.timeoutMs, error);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      this.active.delete(stop);
      peer.inFlight--;
      peer.lastUsedMs = Date.now();
    }
  }

  private async exchange(pool: Pool, to: Address, channel: string, body: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    const response = await pool.request({
      path: channelPath(channel),
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', [FROM_HEADER]: this.options.localAddress() },
      body,
      signal,
    });
    const length = announcedLength(response.headers['content-length']);
    if (response.statusCode < 200 || response.statusCode > 299) {
      const text = await readBody(response.body, null, ERROR_TEXT_MAX_BYTES).then(
        (bytes) => bytes.toString('utf8'),
        () => '',
      );
      throw new TransportError('remote', `${to} answered ${response.statusCode} on ${channel}${text === '' ? '' : `: ${text}`}`);
    }
    return await readBody(response.body, length, this.options.maxResponseBodyBytes);
  }

  /** Fails every request in flight with `closed` and destroys every pool. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const stop of [...this.active]) stop('closed');
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((peer) => peer.pool.destroy()));
  }

  private failure(
    cause: TransportErrorCode | null,
    to: Address,
    channel: string,
    timeoutMs: number,
    error: unknown,
  ): TransportError {
    switch (cause) {
      case 'timeout':
        return new TransportError('timeout', `no answer from ${to} on ${channel} within ${timeoutMs} ms`);
      case 'aborted':
        return new TransportError('aborted', `request to ${to} on ${channel} was aborted`);
      case 'closed':
        return new TransportError('closed', `transport stopped during a request to ${to} on ${channel}`);
      default: {
        const code = requestErrorCode(error);
        const reason = error instanceof Error ? error.message : String(error);
        return new TransportError(code, `request to ${to} on ${channel} failed (${code}): ${reason}`, { cause: error });
      }
    }
  }

  private pool(to: Address): PeerPool {
    const existing = this.pools.get(to);
    if (existing !== undefined) return existing;
    parseAddress(to);
    const tls = this.options.tls;
    const origin = `${tls === null ? 'http' : 'https'}://${to}`;
    const pool = new Pool(origin, {
      connections: this.options.connectionsPerPeer,
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // The whole exchange is bounded by each request's own timeout instead.
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: {
        timeout: this.options.connectTimeoutMs,
        ...(tls === null
          ? {}
          : {
              cert: tls.cert,
              key: tls.key,
              ca: tls.ca,
              rejectUnauthorized: true,
              // Membership is proven by the CA signature; peers are addressed by IP, not by a name
              // their certificate could carry (docs/security.md).
              checkServerIdentity: () => undefined,
            }),
      },
    });
    const peer: PeerPool = { pool, inFlight: 0, lastUsedMs: Date.now() };
    this.pools.set(to, peer);
    this.armSweep();
    return peer;
  }

  private armSweep(): void {
    if (this.sweepTimer !== null) return;
    this.sweepTimer = setInterval(() => this.closeIdlePools(), Math.max(1000, this.options.idlePoolTimeoutMs / 2));
    // Idle pools are a resource matter, never a reason to keep the process alive.
    this.sweepTimer.unref();
  }

  private closeIdlePools(): void {
    const cutoffMs = Date.now() - this.options.idlePoolTimeoutMs;
    for (const [address, peer] of this.pools) {
      if (peer.inFlight > 0 || peer.lastUsedMs > cutoffMs) continue;
      this.pools.delete(address);
      peer.pool.close().catch(() => undefined);
    }
    if (this.pools.size === 0 && this.sweepTimer !== null) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }
}
