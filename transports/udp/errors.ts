// Errors of the UDP transport's construction and use. Network failures of a request are
// TransportErrors (cluster/transport.ts); these are programmer and configuration errors, thrown at
// once with a precise message that never contains key material.

/** An address is not `host:port` (IPv6 in brackets) with a port in 0..65535. */
export class InvalidAddressError extends Error {
  override readonly name = 'InvalidAddressError';
  readonly code = 'udp_invalid_address';
  constructor(
    readonly address: string,
    reason: string,
  ) {
    super(`invalid address ${JSON.stringify(address)}: ${reason}`);
  }
}

/** A gossip key is not 32 bytes (AES-256). Only its position and length are reported, never its bytes. */
export class InvalidGossipKeyError extends Error {
  override readonly name = 'InvalidGossipKeyError';
  readonly code = 'udp_invalid_gossip_key';
  constructor(
    readonly index: number,
    readonly byteLength: number,
  ) {
    super(`gossip key #${index} is ${byteLength} bytes; AES-256-GCM keys are exactly 32 bytes`);
  }
}

/** `start` was called twice, or after `stop`: a transport has one life. */
export class TransportLifecycleError extends Error {
  override readonly name = 'TransportLifecycleError';
  readonly code = 'udp_transport_lifecycle';
  constructor(operation: string, state: string) {
    super(`cannot ${operation} a UDP transport that is ${state}`);
  }
}

/** One error for every transport: it is part of the Transport contract. */
export { PacketTooLargeError } from '../../cluster/index.js';
