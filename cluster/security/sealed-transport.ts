// A transport wrapper that authenticates and encrypts everything a cluster sends, on any transport
// (UDP, libp2p, the simulator): packets, requests, their answers and native broadcasts, each sealed
// with AES-256-GCM under keys derived from the cluster secret (cluster-keys.ts). Whatever no key of
// the keyring opens is dropped and counted: a forged or foreign packet is never parsed, a forged
// request never reaches a handler, a forged answer fails the request. This is memberlist's keyring
// encryption made a wrapper, as the Transport's design asks of new capabilities.
//
// Formats (the version byte and key id are authenticated as additional data):
//   packet    [1][key id 4][nonce 12][ciphertext][tag 16]                 AAD: version, key id, "packet"
//   request   [1][key id 4][nonce 12][ciphertext of sender + body][tag]   AAD: version, key id, "request", channel
//   answer    [1][nonce 12][ciphertext][tag]                              AAD: version, "answer", channel, request nonce
//   broadcast [1][key id 4][nonce 12][ciphertext][tag]                    AAD: version, key id, "broadcast", topic
// The sender of a request travels sealed inside it, so a handler is told who asked by someone who holds
// the key, not by a header anyone can set. An answer is bound to its request's nonce and channel: an
// answer recorded once cannot be replayed to another request.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { Address, BroadcastHandler, Broadcaster, PacketHandler, RequestHandler, RequestOptions, Transport } from '../transport.js';
import { TransportError } from '../transport.js';
import { ClusterKeyring, KEY_ID_BYTES, type ClusterKeys } from './cluster-keys.js';
import { systemNonces } from './system-nonces.js';

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes a sealed packet adds: version, key id, nonce and tag. */
export const SEALED_PACKET_OVERHEAD_BYTES = 1 + KEY_ID_BYTES + NONCE_BYTES + TAG_BYTES;

/** Which path an unauthenticated input came in on. */
export type RejectedPath = 'packet' | 'request' | 'answer' | 'broadcast';

export interface SealedTransportOptions {
  /** Cluster secrets, primary first, each at least 32 bytes: the primary seals, every one opens. */
  readonly secrets: readonly Uint8Array[];
  /** Fills a nonce; the operating system's CSPRNG by default. */
  readonly nonces?: (target: Uint8Array) => void;
  /** Told of every input no key opened (for metrics and a rate-limited log). */
  readonly onRejected?: (path: RejectedPath, from: Address) => void;
}

export interface SealedTransportCounters {
  readonly rejected: Readonly<Record<RejectedPath, number>>;
}

/** A request whose seal no key of the keyring opens; its handler is never called. */
export class UnauthenticatedRequestError extends Error {
  override readonly name = 'UnauthenticatedRequestError';
  readonly code = 'ERR_UNAUTHENTICATED_REQUEST';
  constructor(channel: string) {
    super(`a request on ${channel} is not sealed with a key of this cluster`);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function seal(key: Buffer, nonce: Uint8Array, aad: Uint8Array, parts: readonly Uint8Array[], head: Uint8Array): Uint8Array {
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const body = parts.map((part) => cipher.update(part));
  cipher.final();
  return Buffer.concat([head, nonce, ...body, cipher.getAuthTag()]);
}

/** The plaintext of `sealed[offset..]` (nonce, ciphertext, tag), or undefined when it does not open. */
function open(key: Buffer, aad: Uint8Array, sealed: Uint8Array, offset: number): { plaintext: Buffer; nonce: Uint8Array } | undefined {
  if (sealed.byteLength < offset + NONCE_BYTES + TAG_BYTES) return undefined;
  const nonce = sealed.subarray(offset, offset + NONCE_BYTES);
  const tagStart = sealed.byteLength - TAG_BYTES;
  const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(tagStart));
  const plaintext = decipher.update(sealed.subarray(offset + NONCE_BYTES, tagStart));
  try {
    decipher.final();
  } catch {
    return undefined;
  }
  return { plaintext, nonce };
}

function aadOf(...parts: (Uint8Array | string)[]): Uint8Array {
  // Each string is NUL-terminated so "ab" + "c" and "a" + "bc" never make the same data.
  return Buffer.concat(parts.map((part) => (typeof part === 'string' ? encoder.encode(`${part}\0`) : part)));
}

function head(keys: ClusterKeys): Uint8Array {
  const bytes = new Uint8Array(1 + KEY_ID_BYTES);
  bytes[0] = VERSION;
  bytes.set(keys.id, 1);
  return bytes;
}

/** `[length u16][utf-8 sender]`: addresses are short. */
function senderPrefix(sender: Address): Uint8Array {
  const bytes = encoder.encode(sender);
  const prefix = new Uint8Array(2);
  new DataView(prefix.buffer).setUint16(0, bytes.byteLength);
  return Buffer.concat([prefix, bytes]);
}

export class SealedTransport implements Transport {
  readonly maxPacketBytes: number;
  readonly broadcaster?: Broadcaster;
  private readonly keyring: ClusterKeyring;
  private readonly nonces: (target: Uint8Array) => void;
  private readonly rejected: Record<RejectedPath, number> = { packet: 0, request: 0, answer: 0, broadcast: 0 };

  constructor(
    private readonly inner: Transport,
    private readonly options: SealedTransportOptions,
  ) {
    this.keyring = new ClusterKeyring(options.secrets);
    this.nonces = options.nonces ?? systemNonces;
    this.maxPacketBytes = inner.maxPacketBytes - SEALED_PACKET_OVERHEAD_BYTES;
    if (this.maxPacketBytes <= 0) throw new RangeError(`packets of ${inner.maxPacketBytes} bytes leave no room for a seal`);
    const broadcaster = inner.broadcaster;
    if (broadcaster !== undefined) this.broadcaster = this.sealBroadcasts(broadcaster);
  }

  get localAddress(): Address {
    return this.inner.localAddress;
  }

  counters(): SealedTransportCounters {
    return { rejected: { ...this.rejected } };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }

  sendPacket(to: Address, data: Uint8Array): void {
    const keys = this.keyring.primary;
    const prefix = head(keys);
    this.inner.sendPacket(to, seal(keys.packetKey, this.nonce(), aadOf(prefix, 'packet'), [data], prefix));
  }

  onPacket(handler: PacketHandler): void {
    this.inner.onPacket((from, data) => {
      const keys = data[0] === VERSION ? this.keyring.find(data, 1) : undefined;
      const opened = keys && open(keys.packetKey, aadOf(data.subarray(0, 1 + KEY_ID_BYTES), 'packet'), data, 1 + KEY_ID_BYTES);
      if (opened === undefined) return this.reject('packet', from);
      handler(from, opened.plaintext);
    });
  }

  async request(to: Address, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    const keys = this.keyring.primary;
    const prefix = head(keys);
    const nonce = this.nonce();
    const sealed = seal(keys.requestKey, nonce, aadOf(prefix, 'request', channel), [senderPrefix(this.inner.localAddress), body], prefix);
    const answer = await this.inner.request(to, channel, sealed, options);
    const opened = answer[0] === VERSION ? open(keys.requestKey, aadOf(answer.subarray(0, 1), 'answer', channel, nonce), answer, 1) : undefined;
    if (opened === undefined) {
      this.reject('answer', to);
      throw new TransportError('remote', `the answer of ${to} on ${channel} is not sealed with this cluster's key`);
    }
    return opened.plaintext;
  }

  onRequest(channel: string, handler: RequestHandler): void {
    this.inner.onRequest(channel, async (from, body, signal) => {
      const keys = body[0] === VERSION ? this.keyring.find(body, 1) : undefined;
      const opened = keys && open(keys.requestKey, aadOf(body.subarray(0, 1 + KEY_ID_BYTES), 'request', channel), body, 1 + KEY_ID_BYTES);
      const request = opened && this.splitSender(opened.plaintext);
      if (keys === undefined || opened === undefined || request === undefined) {
        this.reject('request', from);
        throw new UnauthenticatedRequestError(channel);
      }
      const answer = await handler(request.sender, request.body, signal);
      const prefix = new Uint8Array([VERSION]);
      return seal(keys.requestKey, this.nonce(), aadOf(prefix, 'answer', channel, opened.nonce), [answer], prefix);
    });
  }

  private splitSender(plaintext: Buffer): { sender: Address; body: Uint8Array } | undefined {
    if (plaintext.byteLength < 2) return undefined;
    const length = plaintext.readUInt16BE(0);
    if (plaintext.byteLength < 2 + length) return undefined;
    try {
      return { sender: decoder.decode(plaintext.subarray(2, 2 + length)), body: plaintext.subarray(2 + length) };
    } catch {
      return undefined;
    }
  }

  private sealBroadcasts(inner: Broadcaster): Broadcaster {
    return {
      publish: (topic, data) => {
        const keys = this.keyring.primary;
        const prefix = head(keys);
        return inner.publish(topic, seal(keys.requestKey, this.nonce(), aadOf(prefix, 'broadcast', topic), [data], prefix));
      },
      subscribe: (topic, handler: BroadcastHandler) => {
        inner.subscribe(topic, (from, data) => {
          const keys = data[0] === VERSION ? this.keyring.find(data, 1) : undefined;
          const opened = keys && open(keys.requestKey, aadOf(data.subarray(0, 1 + KEY_ID_BYTES), 'broadcast', topic), data, 1 + KEY_ID_BYTES);
          if (opened === undefined) return this.reject('broadcast', from);
          handler(from, opened.plaintext);
        });
      },
    };
  }

  private nonce(): Uint8Array {
    const nonce = new Uint8Array(NONCE_BYTES);
    this.nonces(nonce);
    return nonce;
  }

  private reject(path: RejectedPath, from: Address): void {
    this.rejected[path] += 1;
    this.options.onRejected?.(path, from);
  }
}

/** Wraps `transport` so that all its traffic is sealed under the cluster secrets. */
export function sealTransport(transport: Transport, options: SealedTransportOptions): SealedTransport {
  return new SealedTransport(transport, options);
}
