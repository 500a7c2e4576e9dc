// The keys a cluster secret stands for. One shared secret protects every path of every transport:
// HKDF-SHA256 (RFC 5869) derives from it a key for packets, a key for requests and their answers, and
// a 4-byte key id that tells a receiver which secret of its keyring sealed a message, so secrets rotate
// the way memberlist's keyring does (the first seals, every one opens) without trying each key.
import { hkdfSync } from 'node:crypto';

/** Shortest secret accepted: 256 bits, the strength of the AES-256 keys derived from it. */
export const MIN_SECRET_BYTES = 32;
export const KEY_ID_BYTES = 4;
const SALT = 'svc-cluster-secret-v1';

/** The keys derived from one cluster secret. */
export interface ClusterKeys {
  /** Names the secret on the wire (derived, so it says nothing of the secret). */
  readonly id: Uint8Array;
  /** AES-256-GCM key of packets. */
  readonly packetKey: Buffer;
  /** AES-256-GCM key of requests, their answers and native broadcasts. */
  readonly requestKey: Buffer;
}

export class ClusterSecretError extends Error {
  override readonly name = 'ClusterSecretError';
  readonly code = 'ERR_CLUSTER_SECRET';
}

function derive(secret: Uint8Array, info: string, bytes: number): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, SALT, info, bytes));
}

/** Derives the keys of `secret` (at least 32 bytes); errors name the secret by position, never by value. */
export function deriveClusterKeys(secret: Uint8Array, position = 0): ClusterKeys {
  if (secret.byteLength < MIN_SECRET_BYTES) {
    throw new ClusterSecretError(`cluster secret #${position} is ${secret.byteLength} bytes; at least ${MIN_SECRET_BYTES} are needed`);
  }
  return { id: derive(secret, 'key id', KEY_ID_BYTES), packetKey: derive(secret, 'packets', 32), requestKey: derive(secret, 'requests', 32) };
}

/** The keys of a keyring, primary first, and a lookup by key id. */
export class ClusterKeyring {
  readonly primary: ClusterKeys;
  private readonly byId = new Map<number, ClusterKeys>();

  constructor(secrets: readonly Uint8Array[]) {
    if (secrets.length === 0) throw new ClusterSecretError('a cluster keyring needs at least one secret');
    const keys = secrets.map((secret, position) => deriveClusterKeys(secret, position));
    this.primary = keys[0]!;
    // A repeated secret is harmless; the first position wins.
    for (const key of keys) if (!this.byId.has(idNumber(key.id))) this.byId.set(idNumber(key.id), key);
  }

  /** The keys whose id is the 4 bytes at `offset` of `data`, if this keyring holds them. */
  find(data: Uint8Array, offset: number): ClusterKeys | undefined {
    if (data.byteLength < offset + KEY_ID_BYTES) return undefined;
    return this.byId.get(new DataView(data.buffer, data.byteOffset + offset, KEY_ID_BYTES).getUint32(0));
  }
}

function idNumber(id: Uint8Array): number {
  return new DataView(id.buffer, id.byteOffset, KEY_ID_BYTES).getUint32(0);
}
