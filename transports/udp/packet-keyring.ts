// Sealing of SWIM packets with AES-256-GCM and a keyring, after memberlist's keyring: the primary
// key (the first) seals, every key is tried for opening, so keys rotate without a flag day (add the
// new key everywhere, make it primary everywhere, then remove the old one).
//
// A sealed packet is [version u8 = 1][nonce 12 bytes][ciphertext][tag 16 bytes]. The version byte
// is authenticated as additional data, so it cannot be swapped to downgrade the format. Nonces are
// random: at 2^32 packets per key (NIST SP 800-38D §8.3) a node sending 1,000 packets a second would
// need 136 years, and rotating the primary key starts the count again.

import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';
import { InvalidGossipKeyError } from './errors.js';

export const SEAL_VERSION = 1;
export const KEY_BYTES = 32;
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;
/** Bytes a sealed packet adds to its plaintext: version, nonce and tag. */
export const SEAL_OVERHEAD_BYTES = 1 + NONCE_BYTES + TAG_BYTES;

const VERSION_AAD = Buffer.from([SEAL_VERSION]);

export class PacketKeyring {
  private readonly keys: readonly Buffer[];

  /** `keys`: primary first; each exactly 32 bytes. The keyring keeps its own copies. */
  constructor(keys: readonly Uint8Array[]) {
    if (keys.length === 0) throw new RangeError('a packet keyring needs at least one key');
    this.keys = keys.map((key, index) => {
      if (key.byteLength !== KEY_BYTES) throw new InvalidGossipKeyError(index, key.byteLength);
      return Buffer.from(key);
    });
  }

  get size(): number {
    return this.keys.length;
  }

  seal(plaintext: Uint8Array): Buffer {
    const sealed = Buffer.allocUnsafe(SEAL_OVERHEAD_BYTES + plaintext.byteLength);
    sealed[0] = SEAL_VERSION;
    const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
    randomFillSync(nonce);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0]!, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(VERSION_AAD);
    const body = cipher.update(plaintext);
    body.copy(sealed, 1 + NONCE_BYTES);
    // GCM is a stream mode: final() yields no further bytes, only makes the tag available.
    cipher.final();
    cipher.getAuthTag().copy(sealed, 1 + NONCE_BYTES + plaintext.byteLength);
    return sealed;
  }

  /** The plaintext, or null when no key opens the packet (forged, corrupted, unknown key or version). */
  open(sealed: Uint8Array): Buffer | null {
    if (sealed.byteLength < SEAL_OVERHEAD_BYTES || sealed[0] !== SEAL_VERSION) return null;
    const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
    const tagStart = sealed.byteLength - TAG_BYTES;
    const ciphertext = sealed.subarray(1 + NONCE_BYTES, tagStart);
    const tag = sealed.subarray(tagStart);
    for (const key of this.keys) {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(VERSION_AAD);
      decipher.setAuthTag(tag);
      const plaintext = decipher.update(ciphertext);
      try {
        decipher.final();
        return plaintext;
      } catch {
        // Wrong key or a forged packet: try the next key.
      }
    }
    return null;
  }
}

/** Decodes `cluster.gossip_keys` entries (base64 of 32 bytes each, primary first). */
export function decodeGossipKeys(encoded: readonly string[]): Buffer[] {
  return encoded.map((text, index) => {
    const key = Buffer.from(text, 'base64');
    if (key.byteLength !== KEY_BYTES) throw new InvalidGossipKeyError(index, key.byteLength);
    return key;
  });
}
