// Errors the cluster library raises, one class per condition with a stable `code`.

export class ClusterStoppedError extends Error {
  override readonly name = 'ClusterStoppedError';
  readonly code = 'ERR_CLUSTER_STOPPED';
  constructor(operation: string) {
    super(`${operation}: the cluster member is not running`);
  }
}

export class JoinAbortedError extends Error {
  override readonly name = 'JoinAbortedError';
  readonly code = 'ERR_CLUSTER_JOIN_ABORTED';
  constructor(options?: { cause?: unknown }) {
    super('join was aborted before any seed answered', options);
  }
}

export class MetadataTooLargeError extends Error {
  override readonly name = 'MetadataTooLargeError';
  readonly code = 'ERR_CLUSTER_METADATA_TOO_LARGE';
  constructor(bytes: number, maxBytes: number) {
    super(`member metadata takes ${bytes} bytes encoded, more than the ${maxBytes} allowed`);
  }
}

export class BroadcastTooLargeError extends Error {
  override readonly name = 'BroadcastTooLargeError';
  readonly code = 'ERR_CLUSTER_BROADCAST_TOO_LARGE';
  constructor(bytes: number, maxBytes: number) {
    super(`a broadcast of ${bytes} bytes encoded does not fit one packet of ${maxBytes} bytes`);
  }
}

export class UnknownMemberError extends Error {
  override readonly name = 'UnknownMemberError';
  readonly code = 'ERR_CLUSTER_UNKNOWN_MEMBER';
  constructor(readonly member: string) {
    super(`no member named ${JSON.stringify(member)} is known`);
  }
}

/** A user channel name that is empty or in the protocol's own `swim/` namespace. */
export class ReservedChannelError extends Error {
  override readonly name = 'ReservedChannelError';
  readonly code = 'ERR_RESERVED_CHANNEL';
  constructor(channel: string) {
    super(`channel "${channel}" is reserved: user channels may not be empty or start with "swim/"`);
  }
}
