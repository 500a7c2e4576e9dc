// What a member knows about one member of the cluster, and the frozen snapshot it hands to consumers.
import type { Address } from '../transport.js';
import type { MemberState, Metadata } from '../codec/messages.js';
import type { Suspicion } from './suspicion.js';

/** A consumer's view of one member at one moment. */
export interface MemberInfo {
  readonly name: string;
  readonly address: Address;
  readonly state: MemberState;
  readonly incarnation: number;
  readonly metadata: Metadata;
}

export class MemberRecord {
  /** The running suspicion while `state` is suspect. */
  suspicion: Suspicion | undefined = undefined;

  constructor(
    readonly name: string,
    public address: Address,
    public incarnation: number,
    public metadata: Metadata,
    public state: MemberState,
    public stateChangedAtMs: number,
  ) {}

  /** Alive or suspect: still probed, still owns ring keys. */
  get isLive(): boolean {
    return this.state === 'alive' || this.state === 'suspect';
  }

  snapshot(): MemberInfo {
    return Object.freeze({
      name: this.name,
      address: this.address,
      state: this.state,
      incarnation: this.incarnation,
      metadata: this.metadata,
    });
  }
}

export function sameMetadata(a: Metadata, b: Metadata): boolean {
  if (a === b) return true;
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  for (const key of aKeys) if (a[key] !== b[key]) return false;
  return true;
}
