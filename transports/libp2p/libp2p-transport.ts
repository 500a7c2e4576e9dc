// The libp2p transport (`cluster.transport: libp2p`): TCP, noise, yamux, identify and gossipsub.
// SWIM packets and requests travel on libp2p protocol streams (wire.ts), broadcasts on gossipsub
// topics, and only peers on the allowlist get a connection at all (allowlist-gater.ts).
import './promise-with-resolvers.js';
import { setMaxListeners } from 'node:events';
import type { GossipSub } from '@libp2p/gossipsub';
import type { Connection, Libp2p, Stream } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import type {
  Address,
  PacketHandler,
  RequestHandler,
  RequestOptions,
  Transport,
} from '../../cluster/transport.js';
import { TransportError } from '../../cluster/transport.js';
import { allowlistGater } from './allowlist-gater.js';
import { Deadline } from './deadline.js';
import { PacketTooLargeError } from './errors.js';
import { dialFailure, exchangeFailure } from './failure-codes.js';
import { GossipsubBroadcaster } from './gossipsub-broadcaster.js';
import { loadOrCreateNodeKey } from './node-key.js';
import { parsePeerAddress, peerIdOfAddress } from './peer-address.js';
import { StreamReader, writeParts } from './stream-io.js';
import {
  addressBelongsTo,
  encodeErrorMessage,
  encodePacketFrame,
  encodeRequestHeader,
  encodeResponseHeader,
  MAX_ADDRESS_BYTES,
  MAX_CHANNEL_BYTES,
  MAX_ERROR_MESSAGE_BYTES,
  PACKET_PROTOCOL,
  REQUEST_PROTOCOL,
  ResponseStatus,
} from './wire.js';
import type { ResponseStatus as ResponseStatusCode } from './wire.js';

export interface Libp2pTransportOptions {
  /** Directory of the node key file (created 0700, the key 0600): the key, and so the peer id, survive restarts. */
  readonly dataDir: string;
  /**
   * Peer ids (`12D3KooW...`) allowed to connect or be connected to; connections with any other peer are
   * closed right after the noise handshake. No default: which nodes form the cluster is the operator's call.
   */
  readonly allowedPeerIds: readonly string[];
  /** Listen address, a TCP multiaddr or host:port. Default 127.0.0.1 on an ephemeral port: loopback until told otherwise. */
  readonly listen?: string;
  /**
   * Address peers are told to dial (multiaddr or host:port, without /p2p/) when it differs from the bound
   * one (NAT, 0.0.0.0). Default: the first address libp2p reports listening on.
   */
  readonly advertise?: string;
  /** Largest SWIM packet. Default 1400, the UDP transport's, so a broadcast that fits one fits the other. */
  readonly maxPacketBytes?: number;
  /** Largest request or response body. Default 64 MiB: a 50 MiB peer fetch with room to spare. */
  readonly maxBodyBytes?: number;
  /** How long one packet may take to reach a peer (dial included). Default 1000 ms: one default probe interval. */
  readonly packetTimeoutMs?: number;
  /** Packets being sent at once; more are dropped, as a full socket buffer would. Default 1024. */
  readonly maxPacketsInFlight?: number;
  /** Streams of one protocol open at once on one connection, each way. Default 2048: 1,000 requests in flight with headroom. */
  readonly maxStreamsPerConnection?: number;
  /** Connections libp2p keeps before pruning. Default 1024: one per member of a large cluster. */
  readonly maxConnections?: number;
  /** Longest `broadcaster.publish` waits for connected peers to announce a topic. Default 1000 ms: one gossipsub heartbeat. */
  readonly broadcastWarmUpMs?: number;
  /** Receives errors of packet and broadcast handlers and rejected inbound frames; they never stop the transport. */
  readonly onError?: (error: unknown) => void;
}

const DEFAULT_LISTEN = '/ip4/127.0.0.1/tcp/0';
const DEFAULT_MAX_PACKET_BYTES = 1400;
const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
const DEFAULT_PACKET_TIMEOUT_MS = 1000;
const DEFAULT_MAX_PACKETS_IN_FLIGHT = 1024;
const DEFAULT_MAX_STREAMS_PER_CONNECTION = 2048;
const DEFAULT_MAX_CONNECTIONS = 1024;
const DEFAULT_BROADCAST_WARM_UP_MS = 1000;
/**
 * libp2p refuses more than 5 inbound connections per second from one host by default, a guard for
 * public nodes. Cluster members are few, known and allowlisted, and several may share a host (tests,
 * NAT), so the bound is raised.
 */
const INBOUND_CONNECTIONS_PER_HOST_PER_SECOND = 100;
/** Seed addresses whose peer id is remembered; seeds are a handful, this only bounds a misuse. */
const MAX_SEED_PEER_IDS = 1024;

type ClusterLibp2p = Libp2p<{ pubsub: GossipSub }>;

/** The libp2p modules, loaded once the Promise.withResolvers polyfill is in place. */
async function loadLibp2p() {
  const [{ createLibp2p }, { tcp }, { noise }, { yamux }, { identify }, { gossipsub }] = await Promise.all([
    import('libp2p'),
    import('@libp2p/tcp'),
    import('@libp2p/noise'),
    import('@libp2p/yamux'),
    import('@libp2p/identify'),
    import('@libp2p/gossipsub'),
  ]);
  return { createLibp2p, tcp, noise, yamux, identify, gossipsub };
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isInteger(resolved) || resolved <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return resolved;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class Libp2pTransport implements Transport {
  readonly maxPacketBytes: number;
  readonly broadcaster: GossipsubBroadcaster;
  private readonly options: Libp2pTransportOptions;
  private readonly allowedPeerIds: ReadonlySet<string>;
  private readonly maxBodyBytes: number;
  private readonly packetTimeoutMs: number;
  private readonly maxPacketsInFlight: number;
  private readonly maxStreamsPerConnection: number;
  private readonly maxConnections: number;
  private readonly onError: (error: unknown) => void;
  private readonly requestHandlers = new Map<string, RequestHandler>();
  /** Peer ids learned for addresses given without one (host:port seeds), oldest first. */
  private readonly seedPeerIds = new Map<Address, string>();
  private packetHandler: PacketHandler | undefined;
  private node: ClusterLibp2p | undefined;
  private address: Address | undefined;
  private stopController = new AbortController();
  private packetsInFlight = 0;
  /** The peer id of the node key, known once the key file has been read. */
  private ownPeerId: string | undefined;

  constructor(options: Libp2pTransportOptions) {
    if (typeof options.dataDir !== 'string' || options.dataDir.length === 0) {
      throw new TypeError('the libp2p transport needs a dataDir for its key file');
    }
    if (!Array.isArray(options.allowedPeerIds)) throw new TypeError('allowedPeerIds must be a list of peer ids');
    if (options.listen !== undefined) parsePeerAddress(options.listen);
    if (options.advertise !== undefined) parsePeerAddress(options.advertise);
    this.options = options;
    this.allowedPeerIds = new Set(options.allowedPeerIds);
    this.maxPacketBytes = positiveInteger('maxPacketBytes', options.maxPacketBytes, DEFAULT_MAX_PACKET_BYTES);
    this.maxBodyBytes = positiveInteger('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES);
    this.packetTimeoutMs = positiveInteger('packetTimeoutMs', options.packetTimeoutMs, DEFAULT_PACKET_TIMEOUT_MS);
    this.maxPacketsInFlight = positiveInteger('maxPacketsInFlight', options.maxPacketsInFlight, DEFAULT_MAX_PACKETS_IN_FLIGHT);
    this.maxStreamsPerConnection = positiveInteger(
      'maxStreamsPerConnection',
      options.maxStreamsPerConnection,
      DEFAULT_MAX_STREAMS_PER_CONNECTION,
    );
    this.maxConnections = positiveInteger('maxConnections', options.maxConnections, DEFAULT_MAX_CONNECTIONS);
    this.onError = options.onError ?? (() => undefined);
    const warmUpMs = options.broadcastWarmUpMs ?? DEFAULT_BROADCAST_WARM_UP_MS;
    if (!(warmUpMs >= 0)) throw new RangeError(`broadcastWarmUpMs must be 0 or more, got ${warmUpMs}`);
    this.broadcaster = new GossipsubBroadcaster(warmUpMs, this.onError);
  }

  get localAddress(): Address {
    if (this.address === undefined) throw new TransportError('closed', 'localAddress: the transport is not started');
    return this.address;
  }

  /** This node's peer id; valid once `start` resolved. */
  get peerId(): string {
    if (this.ownPeerId === undefined) throw new TransportError('closed', 'peerId: the transport is not started');
    return this.ownPeerId;
  }

  async start(): Promise<void> {
    if (this.node !== undefined) return;
    const key = await loadOrCreateNodeKey(this.options.dataDir);
    const { createLibp2p, tcp, noise, yamux, identify, gossipsub } = await loadLibp2p();
    const node = await createLibp2p({
      privateKey: key.privateKey,
      start: false,
      addresses: { listen: [parsePeerAddress(this.options.listen ?? DEFAULT_LISTEN).toString()] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [
        yamux({
          // Two protocols of ours share a connection, each allowed maxStreamsPerConnection streams.
          maxInboundStreams: this.maxStreamsPerConnection * 2,
          maxOutboundStreams: this.maxStreamsPerConnection * 2,
          // A burst of requests right after a dial can reach the listener before its side of the new
          // connection is ready; yamux's default of 10 such early streams would abort the connection.
          maxEarlyStreams: this.maxStreamsPerConnection,
        }),
      ],
      connectionGater: allowlistGater(this.allowedPeerIds),
      connectionManager: {
        maxConnections: this.maxConnections,
        inboundConnectionThreshold: INBOUND_CONNECTIONS_PER_HOST_PER_SECOND,
      },
      services: {
        identify: identify(),
        pubsub: gossipsub({
          // A broadcast in a cluster of one, or before any peer subscribed, is not an error.
          allowPublishToZeroTopicPeers: true,
          // Every member runs gossipsub; there is no floodsub peer to fall back to.
          fallbackToFloodsub: false,
          // A node does not hear its own broadcasts, like the cluster's gossip broadcasts.
          emitSelf: false,
        }),
      },
    });
    const streamLimits = {
      maxInboundStreams: this.maxStreamsPerConnection,
      maxOutboundStreams: this.maxStreamsPerConnection,
    };
    await node.handle(PACKET_PROTOCOL, (stream, connection) => this.receivePacket(stream, connection), streamLimits);
    await node.handle(REQUEST_PROTOCOL, (stream, connection) => this.serveRequest(stream, connection), streamLimits);
    await node.start();
    this.stopController = new AbortController();
    // Every pending exchange listens for the stop; their number is bounded by the stream limits instead.
    setMaxListeners(Infinity, this.stopController.signal);
    this.node = node;
    this.ownPeerId = key.peerId;
    this.address = this.advertisedAddress(node, key.peerId);
    this.broadcaster.attach({ libp2p: node, localAddress: this.address, stopSignal: this.stopController.signal });
  }

  async stop(): Promise<void> {
    const node = this.node;
    if (node === undefined) return;
    this.node = undefined;
    this.address = undefined;
    this.broadcaster.detach();
    this.stopController.abort();
    await node.stop();
  }

  /** Sends one packet on its own stream; throws PacketTooLargeError past maxPacketBytes, drops it on any network trouble. */
  sendPacket(to: Address, data: Uint8Array): void {
    if (data.length > this.maxPacketBytes) throw new PacketTooLargeError(data.length, this.maxPacketBytes);
    const node = this.node;
    if (node === undefined || this.packetsInFlight >= this.maxPacketsInFlight) return;
    this.packetsInFlight++;
    const frame = encodePacketFrame(this.localAddress, data);
    void this.deliverPacket(node, to, frame).finally(() => this.packetsInFlight--);
  }

  /**
   * Opens (or reuses) the connection to a peer without sending anything. Gossipsub forwards only over
   * open connections, so a node that broadcasts before any SWIM traffic flowed connects to its seeds first.
   */
  async connect(to: Address, options: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const node = this.node;
    if (node === undefined) throw new TransportError('closed', `connect to ${to}: the transport is not running`);
    const deadline = new Deadline(`connect to ${to}`, options.timeoutMs, options.signal, this.stopController.signal);
    try {
      await Promise.race([this.dialConnection(node, to, deadline.signal), deadline.expired]);
    } catch (error) {
      throw deadline.reason ?? dialFailure(to, error);
    } finally {
      deadline.dispose();
    }
  }

  onPacket(handler: PacketHandler): void {
    this.packetHandler = handler;
  }

  onRequest(channel: string, handler: RequestHandler): void {
    this.requestHandlers.set(channel, handler);
  }

  async request(to: Address, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    const node = this.node;
    if (node === undefined) throw new TransportError('closed', `request to ${to}: the transport is not running`);
    if (body.length > this.maxBodyBytes) {
      throw new RangeError(`a request body of ${body.length} bytes is over the ${this.maxBodyBytes} bytes allowed`);
    }
    const deadline = new Deadline(`request ${channel} to ${to}`, options.timeoutMs, options.signal, this.stopController.signal);
    try {
      return await Promise.race([this.exchange(node, to, channel, body, deadline), deadline.expired]);
    } finally {
      deadline.dispose();
    }
  }

  private advertisedAddress(node: ClusterLibp2p, peerId: string): Address {
    if (this.options.advertise !== undefined) return `${parsePeerAddress(this.options.advertise).toString()}/p2p/${peerId}`;
    const listening = node.getMultiaddrs()[0];
    if (listening === undefined) throw new Error('libp2p reports no listen address');
    return listening.toString();
  }

  private async deliverPacket(node: ClusterLibp2p, to: Address, frame: Uint8Array): Promise<void> {
    const deadline = new Deadline(`packet to ${to}`, this.packetTimeoutMs, undefined, this.stopController.signal);
    let stream: Stream | undefined;
    try {
      stream = await this.openStream(node, to, PACKET_PROTOCOL, deadline);
      stream.send(frame);
      await stream.close({ signal: deadline.signal });
    } catch (error) {
      // A lost packet is SWIM's business: the probe that sent it times out and asks for help.
      stream?.abort(error instanceof Error ? error : new Error(String(error)));
    } finally {
      deadline.dispose();
    }
  }

  /**
   * Opens a stream to `to`. A connection the peer closed a moment ago can still look open here and fail
   * the first stream; that case is reported as unreachable, so it is retried once on a fresh connection.
   */
  private async openStream(node: ClusterLibp2p, to: Address, protocol: string, deadline: Deadline): Promise<Stream> {
    try {
      return await this.dialStream(node, to, protocol, deadline.signal);
    } catch (error) {
      const failure = deadline.reason ?? dialFailure(to, error);
      if (failure.code !== 'unreachable') throw failure;
    }
    try {
      return await this.dialStream(node, to, protocol, deadline.signal);
    } catch (error) {
      throw deadline.reason ?? dialFailure(to, error);
    }
  }

  /**
   * Dials `to` and opens a stream on the connection. An address without a peer id (a host:port seed)
   * is dialed with the peer id learned on its first connection: libp2p reuses a connection only when
   * it knows whom it dials, and the duplicate connections it otherwise opens and then closes cost
   * gossipsub its stream to that peer.
   */
  private async dialStream(node: ClusterLibp2p, to: Address, protocol: string, signal: AbortSignal): Promise<Stream> {
    const connection = await this.dialConnection(node, to, signal);
    return connection.newStream(protocol, { signal, negotiateFully: false });
  }

  private async dialConnection(node: ClusterLibp2p, to: Address, signal: AbortSignal): Promise<Connection> {
    const address = parsePeerAddress(to);
    const learned = peerIdOfAddress(address) === undefined ? this.seedPeerIds.get(to) : undefined;
    const target = learned === undefined ? address : multiaddr(`${address.toString()}/p2p/${learned}`);
    let connection: Connection;
    try {
      connection = await node.dial(target, { signal });
    } catch (error) {
      // The host may now run another node (or none): learn its peer id again on the next dial.
      this.seedPeerIds.delete(to);
      throw error;
    }
    if (peerIdOfAddress(address) === undefined) this.rememberSeedPeerId(to, connection.remotePeer.toString());
    return connection;
  }

  private rememberSeedPeerId(to: Address, peerId: string): void {
    if (this.seedPeerIds.size >= MAX_SEED_PEER_IDS && !this.seedPeerIds.has(to)) {
      const oldest = this.seedPeerIds.keys().next();
      if (oldest.done !== true) this.seedPeerIds.delete(oldest.value);
    }
    this.seedPeerIds.set(to, peerId);
  }

  private async exchange(node: ClusterLibp2p, to: Address, channel: string, body: Uint8Array, deadline: Deadline): Promise<Uint8Array> {
    const stream = await this.openStream(node, to, REQUEST_PROTOCOL, deadline);
    const abortStream = (): void => stream.abort(deadline.reason ?? new Error('aborted'));
    deadline.signal.addEventListener('abort', abortStream, { once: true });
    try {
      await writeParts(stream, [encodeRequestHeader(this.localAddress, channel, body.length), body], deadline.signal);
      await stream.close({ signal: deadline.signal });
      const reader = new StreamReader(stream);
      const status = await reader.readByte();
      if (status === ResponseStatus.ok) return await reader.readBytes(await reader.readLength('response body', this.maxBodyBytes));
      const message = await reader.readString('error message', MAX_ERROR_MESSAGE_BYTES);
      throw new TransportError('remote', `${to} answered ${channel} with an error: ${message}`);
    } catch (error) {
      if (error instanceof TransportError) throw error;
      throw deadline.reason ?? exchangeFailure(to, error);
    } finally {
      deadline.signal.removeEventListener('abort', abortStream);
    }
  }

  /** The sender's address from the front of a frame, believed only when it names the authenticated peer. */
  private async readSender(reader: StreamReader, connection: Connection): Promise<Address> {
    const from = await reader.readString('sender address', MAX_ADDRESS_BYTES);
    if (!addressBelongsTo(from, connection.remotePeer.toString())) {
      throw new Error(`peer ${connection.remotePeer.toString()} claimed the address ${from}`);
    }
    return from;
  }

  private async receivePacket(stream: Stream, connection: Connection): Promise<void> {
    const deadline = new Deadline('inbound packet', this.packetTimeoutMs, undefined, this.stopController.signal);
    const abortStream = (): void => stream.abort(deadline.reason ?? new Error('aborted'));
    deadline.signal.addEventListener('abort', abortStream, { once: true });
    try {
      const reader = new StreamReader(stream);
      const from = await this.readSender(reader, connection);
      const data = await reader.readToEnd('packet', this.maxPacketBytes);
      await stream.close({ signal: deadline.signal });
      this.packetHandler?.(from, data);
    } catch (error) {
      stream.abort(error instanceof Error ? error : new Error(String(error)));
      this.onError(error);
    } finally {
      deadline.signal.removeEventListener('abort', abortStream);
      deadline.dispose();
    }
  }

  private async serveRequest(stream: Stream, connection: Connection): Promise<void> {
    // The handler's signal fires when the transport stops or the requester goes away.
    const handlerAbort = new AbortController();
    const stopped = (): void => handlerAbort.abort(new TransportError('closed', 'the transport is stopped'));
    const streamClosed = (): void => handlerAbort.abort(new Error('the requester closed the stream'));
    this.stopController.signal.addEventListener('abort', stopped, { once: true });
    stream.addEventListener('close', streamClosed, { once: true });
    try {
      const reader = new StreamReader(stream);
      const from = await this.readSender(reader, connection);
      const channel = await reader.readString('channel', MAX_CHANNEL_BYTES);
      const bodyBytes = await reader.readLength('request body', Number.MAX_SAFE_INTEGER);
      if (bodyBytes > this.maxBodyBytes) {
        await this.respond(stream, ResponseStatus.tooLarge, encodeErrorMessage(`request body over ${this.maxBodyBytes} bytes`), handlerAbort.signal);
        return;
      }
      const body = await reader.readBytes(bodyBytes);
      const handler = this.requestHandlers.get(channel);
      if (handler === undefined) {
        await this.respond(stream, ResponseStatus.noHandler, encodeErrorMessage(`no handler for channel ${channel}`), handlerAbort.signal);
        return;
      }
      let response: Uint8Array;
      try {
        response = await handler(from, body, handlerAbort.signal);
      } catch (error) {
        // A handler cut short by our stop did not fail: the requester sees this node go away instead.
        if (this.stopController.signal.aborted) throw error;
        await this.respond(stream, ResponseStatus.handlerFailed, encodeErrorMessage(messageOf(error)), handlerAbort.signal);
        return;
      }
      if (response.length > this.maxBodyBytes) {
        await this.respond(stream, ResponseStatus.handlerFailed, encodeErrorMessage(`response over ${this.maxBodyBytes} bytes`), handlerAbort.signal);
        return;
      }
      await this.respond(stream, ResponseStatus.ok, response, handlerAbort.signal);
    } catch (error) {
      stream.abort(error instanceof Error ? error : new Error(String(error)));
      this.onError(error);
    } finally {
      this.stopController.signal.removeEventListener('abort', stopped);
      stream.removeEventListener('close', streamClosed);
    }
  }

  private async respond(stream: Stream, status: ResponseStatusCode, body: Uint8Array, signal: AbortSignal): Promise<void> {
    await writeParts(stream, [encodeResponseHeader(status, body.length), body], signal);
    await stream.close({ signal });
  }
}

/** Builds the libp2p transport; bad options throw here (TypeError, RangeError, InvalidPeerAddressError). */
export function createLibp2pTransport(options: Libp2pTransportOptions): Libp2pTransport {
  return new Libp2pTransport(options);
}
