// A cluster-wide key/value store: each key lives on the member `ring.owner(key)` names, and reads and
// writes made on any member are forwarded there with `request`. It is a consumer of the cluster
// library that is not a cache, built only on its public API (cluster/index.ts, published as
// `svc-edge-cache/cluster`) and the UDP transport. Values live in memory: when the owner of a key
// dies, its keys are gone and the ring hands them to a successor, empty. That is a demo's trade-off,
// not a bug.

import { createClusterMember, type ClusterMember, type MembershipConfig } from '../../cluster/index.js';
import { createUdpTransport, type TlsMaterial } from '../../transports/udp/index.js';

export interface KvNodeOptions {
  /** Unique member name. */
  readonly name: string;
  /** `host:port` for UDP and HTTP (one port number for both). */
  readonly bind: string;
  readonly tls?: TlsMaterial;
  readonly gossipKeys?: readonly Uint8Array[];
  readonly membership?: Partial<MembershipConfig>;
}

/** Forwarded reads and writes wait this long for the owner; a LAN round trip takes well under 1 ms. */
const FORWARD_TIMEOUT_MS = 2000;
const GET_CHANNEL = 'kv/get';
const SET_CHANNEL = 'kv/set';

/** No live member owns the key (the cluster is empty or still forming). */
export class NoOwnerError extends Error {
  override readonly name = 'NoOwnerError';
  readonly code = 'kv_no_owner';
  constructor(readonly key: string) {
    super(`no live member owns ${JSON.stringify(key)}`);
  }
}

interface SetRequest {
  key: string;
  value: string;
}

function encode(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

function decode<T>(bytes: Uint8Array): T {
  return JSON.parse(Buffer.from(bytes).toString('utf8')) as T;
}

export class KvNode {
  readonly member: ClusterMember;
  private readonly values = new Map<string, string>();

  constructor(options: KvNodeOptions) {
    const transport = createUdpTransport({
      bind: options.bind,
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      ...(options.gossipKeys === undefined ? {} : { gossipKeys: options.gossipKeys }),
    });
    this.member = createClusterMember({ name: options.name, transport, config: options.membership ?? {} });
    this.member.handleRequest(GET_CHANNEL, (_from, body) => Promise.resolve(encode(this.values.get(decode<string>(body)) ?? null)));
    this.member.handleRequest(SET_CHANNEL, (_from, body) => {
      const { key, value } = decode<SetRequest>(body);
      this.values.set(key, value);
      return Promise.resolve(encode(true));
    });
  }

  /** This node's address, for others to join through. */
  get address(): string {
    return this.member.localMember.address;
  }

  async start(seeds: readonly string[] = []): Promise<void> {
    await this.member.start();
    await this.member.join(seeds);
  }

  /** The value of `key` as its owner holds it, or null. */
  async get(key: string): Promise<string | null> {
    const owner = this.ownerOf(key);
    if (owner === this.member.name) return this.values.get(key) ?? null;
    return decode<string | null>(await this.member.request(owner, GET_CHANNEL, encode(key), { timeoutMs: FORWARD_TIMEOUT_MS }));
  }

  async set(key: string, value: string): Promise<void> {
    const owner = this.ownerOf(key);
    if (owner === this.member.name) {
      this.values.set(key, value);
      return;
    }
    await this.member.request(owner, SET_CHANNEL, encode({ key, value } satisfies SetRequest), { timeoutMs: FORWARD_TIMEOUT_MS });
  }

  /** The member that owns `key` now. */
  ownerOf(key: string): string {
    const owner = this.member.ring.owner(key);
    if (owner === undefined) throw new NoOwnerError(key);
    return owner;
  }

  async stop(): Promise<void> {
    await this.member.leave({ timeoutMs: 1000 });
    await this.member.stop();
  }
}
