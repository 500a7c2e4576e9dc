// The certificate, key and CA of `cluster.tls`, read once at startup. Every node holds a certificate
// signed by the cluster's CA; a peer is a member exactly when its certificate chains to that CA.

import { readFile } from 'node:fs/promises';

export interface TlsMaterial {
  /** PEM certificate chain of this node. */
  readonly cert: string | Buffer;
  /** PEM private key of this node. A secret: never logged, never put in an error. */
  readonly key: string | Buffer;
  /** PEM bundle every peer certificate must chain to. */
  readonly ca: string | Buffer;
}

export interface TlsFiles {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

/** Reads the three PEM files of `cluster.tls`; a missing file rejects with the fs error, which names the path only. */
export async function loadTlsMaterial(files: TlsFiles): Promise<TlsMaterial> {
  const [cert, key, ca] = await Promise.all([readFile(files.cert), readFile(files.key), readFile(files.ca)]);
  return { cert, key, ca };
}
