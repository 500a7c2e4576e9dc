// The wire under the cluster library, kept small and network-neutral (hashicorp/memberlist
// transport.go is the model). Three capabilities:
//   - an unreliable packet path for SWIM probes and piggybacked gossip (UDP-like: may drop, duplicate
//     or reorder; one packet fits one datagram);
//   - a reliable request/response path for push-pull state sync, fan-out and peer fetch;
//   - an optional native broadcast (gossipsub on libp2p).
// Capability is added by wrapping a Transport (metrics, fault injection), never by growing it.
// Addresses are opaque strings that only the transport interprets.

export type Address = string;

/** Handles one inbound packet. `from` is the sender's transport address. */
export type PacketHandler = (from: Address, data: Uint8Array) => void;

/**
 * Handles one inbound request on a channel and resolves to the response body. Throwing (or
 * rejecting) makes the caller's `request` fail with a TransportError of code `remote`.
 */
export type RequestHandler = (from: Address, body: Uint8Array, signal: AbortSignal) => Promise<Uint8Array>;

export interface RequestOptions {
  /** Upper bound on the whole exchange; the request fails with code `timeout` past it. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Why a request failed; fan-out reports these to consumers so they can fall back to gossip. */
export type TransportErrorCode =
  | 'timeout' // no answer within timeoutMs
  | 'refused' // the peer's host answered that nothing listens there
  | 'unreachable' // no route to the peer or the connection could not be established
  | 'aborted' // the caller's AbortSignal fired
  | 'remote' // the peer's handler failed or it has no handler for the channel
  | 'closed'; // this transport is stopped

export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly code: TransportErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Thrown by a request handler whose body it cannot read (not its format, fields of the wrong type, an
 * unknown wire version): the caller is at fault, not the handler. A transport that speaks HTTP answers
 * it 400 with this message, where any other failure of a handler is a 500 that says nothing.
 */
export class MalformedRequestError extends Error {
  override readonly name: string = 'MalformedRequestError';
  readonly code: string = 'ERR_MALFORMED_REQUEST';
}

/**
 * A packet larger than the transport's `maxPacketBytes`. Never a network condition: the sender must fit
 * its packets (the cluster library's codec does), so every transport throws this at once.
 */
export class PacketTooLargeError extends Error {
  override readonly name = 'PacketTooLargeError';
  readonly code = 'ERR_PACKET_TOO_LARGE';
  constructor(
    readonly byteLength: number,
    readonly maxPacketBytes: number,
    /** The sender's address, when the transport knows it. */
    readonly from?: Address,
  ) {
    super(`${from === undefined ? '' : `${from} sent `}a ${byteLength}-byte packet; packets are limited to ${maxPacketBytes} bytes`);
  }
}

export type BroadcastHandler = (from: Address, data: Uint8Array) => void;

/** Native one-to-all delivery, offered by transports that have it (gossipsub). */
export interface Broadcaster {
  publish(topic: string, data: Uint8Array): Promise<void>;
  subscribe(topic: string, handler: BroadcastHandler): void;
}

export interface Transport {
  /** This node's address as peers should use it; valid once `start` resolved. */
  readonly localAddress: Address;
  /** Largest packet `sendPacket` carries (a UDP datagram on a LAN: about 1400 bytes). */
  readonly maxPacketBytes: number;
  start(): Promise<void>;
  /** Closes every socket and timer; pending requests fail with code `closed`. */
  stop(): Promise<void>;

  /** Best effort, never throws for network reasons: a lost packet is SWIM's business. */
  sendPacket(to: Address, data: Uint8Array): void;
  onPacket(handler: PacketHandler): void;

  request(to: Address, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  onRequest(channel: string, handler: RequestHandler): void;

  readonly broadcaster?: Broadcaster;
}
