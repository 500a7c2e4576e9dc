// The node's libp2p identity: an Ed25519 key kept in a file under the data directory, so the peer id
// derived from it (and with it the node's place on every allowlist) survives restarts.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PrivateKey } from '@libp2p/interface';
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { InsecureKeyFileError, InvalidKeyFileError } from './errors.js';

/** Name of the key file inside the data directory. */
export const NODE_KEY_FILE_NAME = 'libp2p-node.key';

/** Owner read/write only, as ssh demands of its private keys. */
const KEY_FILE_MODE = 0o600;

export interface NodeKey {
  readonly privateKey: PrivateKey;
  /** The peer id derived from the key, in its usual base58 string form (12D3KooW...). */
  readonly peerId: string;
  readonly path: string;
}

/**
 * Reads the key file in `dataDir`, or creates it (mode 0600, the directory 0700) on first use. A key
 * file others can read is refused: whoever holds it can impersonate the node to the whole cluster.
 */
export async function loadOrCreateNodeKey(dataDir: string): Promise<NodeKey> {
  const path = join(dataDir, NODE_KEY_FILE_NAME);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const privateKey = (await readKeyFile(path)) ?? (await createKeyFile(path));
  return { privateKey, peerId: peerIdFromPrivateKey(privateKey).toString(), path };
}

async function readKeyFile(path: string): Promise<PrivateKey | undefined> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) throw new InsecureKeyFileError(path, mode);
  const bytes = await readFile(path);
  try {
    return privateKeyFromProtobuf(bytes);
  } catch (error) {
    throw new InvalidKeyFileError(path, { cause: error });
  }
}

async function createKeyFile(path: string): Promise<PrivateKey> {
  const privateKey = await generateKeyPair('Ed25519');
  try {
    // `wx` fails if another process created the file meanwhile; its key then wins.
    await writeFile(path, privateKeyToProtobuf(privateKey), { mode: KEY_FILE_MODE, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const existing = await readKeyFile(path);
    if (existing === undefined) throw error;
    return existing;
  }
  return privateKey;
}
