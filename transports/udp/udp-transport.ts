// The default cluster transport: SWIM packets over UDP (node:dgram) and the reliable path over
// HTTP/1.1 (undici) on the same port number over TCP, like memberlist's one port for UDP and TCP.
// A member's transport address `host:port` therefore reaches both: packets go to UDP host:port and
// requests to http(s)://host:port/v1/peer/<channel>. With `cluster.tls` the HTTP path is mutual TLS;
// with gossip keys every datagram is sealed with AES-256-GCM (packet-keyring.ts).

import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { isIPv6 } from 'node:net';
import {
  type Address,
  type PacketHandler,
  type RequestHandler,
  type RequestOptions,
  type Transport,
} from '../../cluster/transport.js';
import { formatAddress, isUnspecifiedHost, parseAddress, type HostPort } from './address.js';
import { InvalidAddressError, PacketTooLargeError, TransportLifecycleError } from './errors.js';
import { PacketKeyring, SEAL_OVERHEAD_BYTES } from './packet-keyring.js';
import { PeerClient } from './peer-client.js';
import { PeerServer, type PeerRequestListener } from './peer-server.js';
import type { TlsMaterial } from './tls-material.js';

/** The largest datagram on a LAN without IP fragmentation: 1500-byte Ethernet MTU minus headers (memberlist udpBufSize is 65 KB but its packets stay under 1400). */
export const DEFAULT_MAX_DATAGRAM_BYTES = 1400;
/** 16 MiB: a push-pull of 10,000 members with full 512-byte metadata is about 6 MiB. */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 16 * 1024 * 1024;
/** 256 MiB: a peer fetch carries one cached object; larger objects are not worth moving between peers. */
export const DEFAULT_MAX_RESPONSE_BODY_BYTES = 256 * 1024 * 1024;
/** 8 connections per peer bound its in-flight requests; more queue (undici's Pool). */
export const DEFAULT_CONNECTIONS_PER_PEER = 8;
/** 2 s: a LAN connect takes well under a millisecond, so a longer wait means the host is gone. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 2000;
/** 60 s: twice the push-pull interval, so a peer's pool survives between regular exchanges. */
export const DEFAULT_IDLE_POOL_TIMEOUT_MS = 60_000;
/** Attempts to find an ephemeral port free for both UDP and TCP, when `bind` asks for port 0. */
const EPHEMERAL_BIND_ATTEMPTS = 20;
/** Longer than the client's keep-alive (peer-client.ts), so the client closes idle sockets first. */
const SERVER_KEEP_ALIVE_TIMEOUT_MS = 35_000;
/** 10 s for a request's headers: a peer on the network sends them in milliseconds; a slowloris does not. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** 60 s for a whole request: the largest body (16 MiB) crosses a slow LAN link well within it. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** 16 KiB, Node's default: peer requests carry a handful of short fields. */
export const DEFAULT_MAX_HEADER_BYTES = 16_384;

export interface UdpTransportOptions {
  /** `host:port` for the UDP socket and, with `listenHttp`, the HTTP(S) listener; port 0 picks one free for both. */
  readonly bind: string;
  /** `host:port` peers use to reach this node; the bind address by default (required when binding 0.0.0.0 or ::). Port 0 means the bound port. */
  readonly advertise?: string;
  /**
   * Runs the transport's own HTTP(S) listener on the bind address (default true). When false, the
   * embedding server must serve `handler` on the same port number over TCP.
   */
  readonly listenHttp?: boolean;
  /** Mutual TLS on the HTTP path (`cluster.tls`). */
  readonly tls?: TlsMaterial;
  /** AES-256-GCM keys for sealing packets (`cluster.gossip_keys`), primary first, 32 bytes each. */
  readonly gossipKeys?: readonly Uint8Array[];
  readonly maxDatagramBytes?: number;
  readonly maxRequestBodyBytes?: number;
  /** Time allowed for a request's header section on the HTTP(S) listener (408 after it). */
  readonly headersTimeoutMs?: number;
  /** Time allowed for a whole request, body included, on the HTTP(S) listener. */
  readonly requestTimeoutMs?: number;
  /** Largest request header section the HTTP(S) listener reads (431 beyond). */
  readonly maxHeaderBytes?: number;
  readonly maxResponseBodyBytes?: number;
  readonly connectionsPerPeer?: number;
  readonly connectTimeoutMs?: number;
  readonly idlePoolTimeoutMs?: number;
}

/** What protects this transport's traffic (svc's cluster needs both, or a cluster secret, unless told otherwise). */
export interface UdpTransportSecurity {
  /** Packets are sealed with AES-256-GCM: only key holders can read or forge SWIM traffic. */
  readonly packetsSealed: boolean;
  /** Requests are HTTPS with client certificates from the cluster CA. */
  readonly requestsMutualTls: boolean;
}

export interface UdpTransportCounters {
  packetsSent: number;
  packetsReceived: number;
  /** Datagrams no key opened (forged, corrupted, sent in the clear, or sealed with an unknown key). */
  packetsRejected: number;
  /** Sends the socket reported as failed (no route, buffer full). */
  packetSendErrors: number;
}

type Lifecycle = 'new' | 'starting' | 'started' | 'stopped';

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const resolved = value ?? fallback;
  if (!Number.isInteger(resolved) || resolved <= 0) throw new RangeError(`${name} must be a positive integer, got ${resolved}`);
  return resolved;
}

function isAddressInUse(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'EADDRINUSE';
}

export class UdpTransport implements Transport {
  readonly maxPacketBytes: number;
  readonly security: UdpTransportSecurity;
  /** The `/v1/peer/*` request listener, for an embedding server (see docs/security.md for TLS). */
  readonly handler: PeerRequestListener;
  private lifecycle: Lifecycle = 'new';
  private address: Address | null = null;
  private readonly bindAddress: HostPort;
  private readonly advertiseAddress: HostPort | null;
  private readonly listenHttp: boolean;
  private readonly listenerLimits: { headersTimeout: number; requestTimeout: number; maxHeaderSize: number };
  private readonly tls: TlsMaterial | null;
  private readonly keyring: PacketKeyring | null;
  private readonly handlers = new Map<string, RequestHandler>();
  private readonly peerServer: PeerServer;
  private readonly client: PeerClient;
  private packetHandler: PacketHandler | null = null;
  private socket: UdpSocket | null = null;
  private server: HttpServer | null = null;
  private readonly stats: UdpTransportCounters = { packetsSent: 0, packetsReceived: 0, packetsRejected: 0, packetSendErrors: 0 };

  constructor(options: UdpTransportOptions) {
    this.bindAddress = parseAddress(options.bind);
    this.advertiseAddress = options.advertise === undefined ? null : parseAddress(options.advertise);
    if (this.advertiseAddress === null && isUnspecifiedHost(this.bindAddress.host)) {
      throw new InvalidAddressError(options.bind, 'binds every interface; set advertise to the address peers use');
    }
    if (this.advertiseAddress !== null && isUnspecifiedHost(this.advertiseAddress.host)) {
      throw new InvalidAddressError(options.advertise ?? '', 'peers cannot reach an unspecified host');
    }
    this.listenHttp = options.listenHttp ?? true;
    const headersTimeout = positiveInteger(options.headersTimeoutMs, DEFAULT_HEADERS_TIMEOUT_MS, 'headersTimeoutMs');
    this.listenerLimits = {
      headersTimeout,
      // Node requires the request timeout to be at least the headers timeout.
      requestTimeout: Math.max(headersTimeout, positiveInteger(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, 'requestTimeoutMs')),
      maxHeaderSize: positiveInteger(options.maxHeaderBytes, DEFAULT_MAX_HEADER_BYTES, 'maxHeaderBytes'),
    };
    this.tls = options.tls ?? null;
    this.keyring = options.gossipKeys === undefined || options.gossipKeys.length === 0 ? null : new PacketKeyring(options.gossipKeys);
    const maxDatagramBytes = positiveInteger(options.maxDatagramBytes, DEFAULT_MAX_DATAGRAM_BYTES, 'maxDatagramBytes');
    this.maxPacketBytes = maxDatagramBytes - (this.keyring === null ? 0 : SEAL_OVERHEAD_BYTES);
    if (this.maxPacketBytes <= 0) throw new RangeError(`maxDatagramBytes ${maxDatagramBytes} leaves no room for a sealed packet`);
    this.security = { packetsSealed: this.keyring !== null, requestsMutualTls: this.tls !== null };
    this.peerServer = new PeerServer({
      requireAuthorizedTls: this.tls !== null,
      maxRequestBodyBytes: positiveInteger(options.maxRequestBodyBytes, DEFAULT_MAX_REQUEST_BODY_BYTES, 'maxRequestBodyBytes'),
      handlers: this.handlers,
    });
    this.handler = this.peerServer.listener;
    this.client = new PeerClient({
      localAddress: () => this.localAddress,
      tls: this.tls,
      connectionsPerPeer: positiveInteger(options.connectionsPerPeer, DEFAULT_CONNECTIONS_PER_PEER, 'connectionsPerPeer'),
      connectTimeoutMs: positiveInteger(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs'),
      idlePoolTimeoutMs: positiveInteger(options.idlePoolTimeoutMs, DEFAULT_IDLE_POOL_TIMEOUT_MS, 'idlePoolTimeoutMs'),
      maxResponseBodyBytes: positiveInteger(options.maxResponseBodyBytes, DEFAULT_MAX_RESPONSE_BODY_BYTES, 'maxResponseBodyBytes'),
    });
  }

  get localAddress(): Address {
    if (this.address === null) throw new TransportLifecycleError('read the address of', this.lifecycle);
    return this.address;
  }

  counters(): UdpTransportCounters {
    return { ...this.stats };
  }

  async start(): Promise<void> {
    if (this.lifecycle !== 'new') throw new TransportLifecycleError('start', this.lifecycle);
    this.lifecycle = 'starting';
    const { host, port } = this.bindAddress;
    const attempts = port === 0 ? EPHEMERAL_BIND_ATTEMPTS : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        const boundPort = await this.bind(host, port);
        const advertise = this.advertiseAddress;
        this.address =
          advertise === null ? formatAddress(host, boundPort) : formatAddress(advertise.host, advertise.port === 0 ? boundPort : advertise.port);
        this.lifecycle = 'started';
        return;
      } catch (error) {
        await this.closeSockets();
        // Port 0: the port TCP picked may be taken for UDP (or the reverse); try another.
        if (attempt < attempts && isAddressInUse(error)) continue;
        this.lifecycle = 'stopped';
        throw error;
      }
    }
  }

  async stop(): Promise<void> {
    if (this.lifecycle === 'stopped') return;
    this.lifecycle = 'stopped';
    this.peerServer.stop();
    await this.client.close();
    await this.closeSockets();
  }

  sendPacket(to: Address, data: Uint8Array): void {
    if (data.byteLength > this.maxPacketBytes) throw new PacketTooLargeError(data.byteLength, this.maxPacketBytes);
    const socket = this.socket;
    if (this.lifecycle !== 'started' || socket === null) return;
    let target: HostPort;
    try {
      target = parseAddress(to);
    } catch {
      // An address from the network that is not host:port: the packet is lost, as SWIM allows.
      this.stats.packetSendErrors++;
      return;
    }
    // dgram reads the buffer after this call returns, and the caller may reuse its own: seal or copy.
    const datagram = this.keyring === null ? Buffer.from(data) : this.keyring.seal(data);
    this.stats.packetsSent++;
    socket.send(datagram, target.port, target.host, (error) => {
      if (error) this.stats.packetSendErrors++;
    });
  }

  onPacket(handler: PacketHandler): void {
    this.packetHandler = handler;
  }

  request(to: Address, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    return this.client.request(to, channel, body, options);
  }

  onRequest(channel: string, handler: RequestHandler): void {
    this.handlers.set(channel, handler);
  }

  /** Binds TCP (when listening) then UDP on the same port number; resolves to that port. */
  private async bind(host: string, port: number): Promise<number> {
    let udpPort = port;
    if (this.listenHttp) {
      const server = this.createHttpServer();
      this.server = server;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('the HTTP listener has no TCP address');
      udpPort = address.port;
    }
    const socket = createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4' });
    this.socket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address: host, port: udpPort, exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    // After binding, socket errors (ICMP reports of an earlier send) are not this node's failure.
    socket.on('error', () => {
      this.stats.packetSendErrors++;
    });
    socket.on('message', (message, remote) => this.receive(message, formatAddress(remote.address, remote.port)));
    return socket.address().port;
  }

  private createHttpServer(): HttpServer {
    const tls = this.tls;
    const limits = { ...this.listenerLimits, connectionsCheckingInterval: Math.min(1_000, this.listenerLimits.headersTimeout) };
    const server =
      tls === null
        ? createHttpServer(limits, this.handler)
        : createHttpsServer(
            { ...limits, cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true },
            this.handler,
          );
    server.keepAliveTimeout = SERVER_KEEP_ALIVE_TIMEOUT_MS;
    return server;
  }

  private receive(datagram: Buffer, from: Address): void {
    if (this.lifecycle !== 'started') return;
    let data: Uint8Array = datagram;
    if (this.keyring !== null) {
      const opened = this.keyring.open(datagram);
      if (opened === null) {
        this.stats.packetsRejected++;
        return;
      }
      data = opened;
    }
    this.stats.packetsReceived++;
    this.packetHandler?.(from, data);
  }

  private async closeSockets(): Promise<void> {
    const socket = this.socket;
    const server = this.server;
    this.socket = null;
    this.server = null;
    const closing: Promise<void>[] = [];
    if (socket !== null) closing.push(new Promise<void>((resolve) => socket.close(() => resolve())));
    if (server !== null && server.listening) {
      closing.push(new Promise<void>((resolve) => server.close(() => resolve())));
      server.closeAllConnections();
    }
    await Promise.all(closing);
  }
}

export function createUdpTransport(options: UdpTransportOptions): UdpTransport {
  return new UdpTransport(options);
}
