// Errors the libp2p transport raises for programmer and configuration mistakes and malformed frames,
// one class per condition with a stable `code`. Failures of individual requests are TransportErrors (cluster/transport.ts).

export class InsecureKeyFileError extends Error {
  override readonly name = 'InsecureKeyFileError';
  readonly code = 'ERR_LIBP2P_KEY_FILE_INSECURE';
  constructor(
    readonly path: string,
    mode: number,
  ) {
    super(`the libp2p key file ${path} is readable by others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`);
  }
}

export class InvalidKeyFileError extends Error {
  override readonly name = 'InvalidKeyFileError';
  readonly code = 'ERR_LIBP2P_KEY_FILE_INVALID';
  constructor(
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`the libp2p key file ${path} does not hold a private key`, options);
  }
}

export class InvalidPeerAddressError extends Error {
  override readonly name = 'InvalidPeerAddressError';
  readonly code = 'ERR_LIBP2P_PEER_ADDRESS_INVALID';
  constructor(
    readonly address: string,
    options?: { cause?: unknown },
  ) {
    super(`${JSON.stringify(address)} is neither a multiaddr nor host:port`, options);
  }
}

/** A peer's stream ended before a whole frame arrived. */
export class TruncatedFrameError extends Error {
  override readonly name = 'TruncatedFrameError';
  readonly code = 'ERR_LIBP2P_FRAME_TRUNCATED';
  constructor(wantedBytes: number, gotBytes: number) {
    super(`the stream ended after ${gotBytes} of ${wantedBytes} bytes`);
  }
}

/** A peer announced or sent more bytes than the bound allows. */
export class FrameTooLargeError extends Error {
  override readonly name = 'FrameTooLargeError';
  readonly code = 'ERR_LIBP2P_FRAME_TOO_LARGE';
  constructor(
    readonly what: string,
    bytes: number,
    maxBytes: number,
  ) {
    super(`${what} of ${bytes} bytes is over the ${maxBytes} bytes allowed`);
  }
}

/** One error for every transport: it is part of the Transport contract. */
export { PacketTooLargeError } from '../../cluster/index.js';
