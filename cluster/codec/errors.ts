// Why a packet or a push-pull state could not be decoded. The packet handler catches both, counts
// them and drops the input: garbage from the network never escapes as an exception.

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
