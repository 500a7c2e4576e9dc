// The certificates of a TLS listener as the main thread reads them from the files the configuration
// names (`tls.certificates`, `admin.tls.certificates`): each file read and parsed, the key checked
// against its certificate, and the names SNI picks it by. A problem names the key path of its file,
// so a bad file reads `tls.certificates[1].key: does not match the certificate of cert` at startup, in
// `svc config validate` and in a reload, which then leaves the certificates in force as they were.
// The result is plain text (PEM and names), so that it can be sent to every data-plane thread.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { Config, ConfigIssue } from '../config/index.js';

/** A listener's `tls` block. */
export type ListenerTlsConfig = NonNullable<Config['tls']>;

/** What a thread needs to serve one certificate. */
export interface ListenerCertificate {
  /** PEM text of the certificate chain and of its key. */
  readonly cert: string;
  readonly key: string;
  /** Lower-case DNS names SNI picks it by (`*.example.com` for a wildcard); may be empty. */
  readonly names: readonly string[];
}

/** A certificate as the main thread read it: what the threads need, and what its expiry is watched by. */
export interface LoadedCertificate extends ListenerCertificate {
  /** How the expiry metric and log name it: its first DNS name, else its first IP address, else its key path. */
  readonly label: string;
  /** The end of its validity, in milliseconds since the epoch. */
  readonly notAfterMs: number;
}

export type CertificatesRead = { readonly ok: true; readonly certificates: LoadedCertificate[] } | { readonly ok: false; readonly issues: ConfigIssue[] };

/** The entries of a certificate's subjectAltName (`DNS:a, IP Address:127.0.0.1`) of one kind. */
function altNames(certificate: X509Certificate, kind: 'DNS' | 'IP Address'): string[] {
  const prefix = `${kind}:`;
  return (certificate.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith(prefix))
    .map((entry) => entry.slice(prefix.length).toLowerCase());
}

/** The names SNI matches: the DNS names, or (RFC 6125 §6.4.4) the subject's CN when there is none. */
function sniNames(certificate: X509Certificate): string[] {
  const dns = altNames(certificate, 'DNS');
  if (dns.length > 0) return dns;
  const commonName = certificate.subject
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice('CN='.length)
    .toLowerCase();
  return commonName === undefined ? [] : [commonName];
}

async function readText(path: string): Promise<string | Error> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    return error as Error;
  }
}

/** One `{ cert, key }` pair, or the problems of its files under `at` (`tls.certificates[0]`). */
async function readPair(at: string, files: { cert: string; key: string }): Promise<LoadedCertificate | ConfigIssue[]> {
  const [cert, key] = await Promise.all([readText(files.cert), readText(files.key)]);
  const issues: ConfigIssue[] = [];
  if (cert instanceof Error) issues.push({ path: `${at}.cert`, message: `cannot read ${JSON.stringify(files.cert)}: ${cert.message}` });
  if (key instanceof Error) issues.push({ path: `${at}.key`, message: `cannot read ${JSON.stringify(files.key)}: ${key.message}` });
  if (cert instanceof Error || key instanceof Error) return issues;
  let certificate: X509Certificate | undefined;
  let privateKey: KeyObject | undefined;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    issues.push({ path: `${at}.cert`, message: `${JSON.stringify(files.cert)} holds no PEM certificate` });
  }
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    issues.push({ path: `${at}.key`, message: `${JSON.stringify(files.key)} holds no usable PEM private key (${(error as Error).message})` });
  }
  if (certificate === undefined || privateKey === undefined) return issues;
  if (!certificate.checkPrivateKey(privateKey)) return [{ path: `${at}.key`, message: `${JSON.stringify(files.key)} is not the key of the certificate in ${JSON.stringify(files.cert)}` }];
  try {
    // What OpenSSL itself refuses (a key too small for its security level, a broken chain) is found now.
    createSecureContext({ cert, key });
  } catch (error) {
    return [{ path: at, message: `OpenSSL refuses this certificate and key: ${(error as Error).message}` }];
  }
  const names = sniNames(certificate);
  return {
    cert,
    key,
    names,
    label: names[0] ?? altNames(certificate, 'IP Address')[0] ?? at,
    notAfterMs: Date.parse(certificate.validTo),
  };
}

/** Reads every certificate of a listener's `tls` block; `key` is the block's key path (`tls`, `admin.tls`). */
export async function readListenerCertificates(key: string, tls: ListenerTlsConfig): Promise<CertificatesRead> {
  const read = await Promise.all(tls.certificates.map((files, i) => readPair(`${key}.certificates[${i}]`, files)));
  const issues = read.filter((pair) => Array.isArray(pair)).flat();
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, certificates: read as LoadedCertificate[] };
}
