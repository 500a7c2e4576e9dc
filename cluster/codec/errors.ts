// Why a packet or a push-pull state could not be decoded. The packet handler catches both, counts
// them and drops the input: garbage from the network never escapes as an exception. A request handler
// turns them into the transport's MalformedRequestError, so the caller hears that it sent garbage.
import { MalformedRequestError } from '../transport.js';

export class UnsupportedWireVersionError extends Error {
  override readonly name = 'UnsupportedWireVersionError';
  readonly code = 'ERR_CLUSTER_WIRE_VERSION';
  constructor(readonly version: number) {
    super(`unsupported cluster wire version ${version}`);
  }
}

export class MalformedMessageError extends Error {
  override readonly name = 'MalformedMessageError';
  readonly code = 'ERR_CLUSTER_MALFORMED_MESSAGE';
  constructor(reason: string) {
    super(`malformed cluster message: ${reason}`);
  }
}

/** `error` as the fault of the request whose body was being decoded, when it is a codec error. */
export function asMalformedRequest(error: unknown): unknown {
  if (!(error instanceof MalformedMessageError || error instanceof UnsupportedWireVersionError)) return error;
  return new MalformedRequestError(error.message, { cause: error });
}
