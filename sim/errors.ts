// Programmer errors of the simulator: each condition has its own class and a stable `code`. They
// throw at the call that made the mistake, because a simulation that silently ignores a wrong setup
// reports figures about a network nobody asked for.

export class UnknownAddressError extends Error {
  override readonly name = 'UnknownAddressError';
  readonly code = 'sim_unknown_address';
  constructor(readonly address: string) {
    super(`no simulated node has the address ${JSON.stringify(address)}`);
  }
}

export class DuplicateAddressError extends Error {
  override readonly name = 'DuplicateAddressError';
  readonly code = 'sim_duplicate_address';
  constructor(readonly address: string) {
    super(`a simulated node with the address ${JSON.stringify(address)} already exists`);
  }
}

export class InvalidLinkOptionsError extends Error {
  override readonly name = 'InvalidLinkOptionsError';
  readonly code = 'sim_invalid_link_options';
  constructor(detail: string) {
    super(`invalid link options: ${detail}`);
  }
}

/** Pause, resume and similar faults need a node in a particular state (e.g. resume needs a pause). */
export class NodeStateError extends Error {
  override readonly name = 'NodeStateError';
  readonly code = 'sim_node_state';
  constructor(
    readonly address: string,
    readonly operation: string,
    readonly state: string,
  ) {
    super(`cannot ${operation} ${address}: it is ${state}`);
  }
}

/** One error for every transport: it is part of the Transport contract. */
export { PacketTooLargeError } from '../cluster/index.js';
