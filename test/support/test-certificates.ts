// Certificates for tests of TLS listeners, made with the openssl CLI as an operator would: a CA of
// the test's own and certificates it signs, each for the names and the number of days asked, and an
// HTTPS client that trusts that CA and says which certificate the server showed.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpsRequest, type Agent } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCa {
  /** The CA certificate's file and PEM text (what a client trusts). */
  readonly certFile: string;
  readonly pem: string;
  readonly keyFile: string;
  readonly dir: string;
}

export interface TestCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  /** The serial number as Node's X509Certificate and getPeerCertificate() show it (upper-case hex). */
  readonly serial: string;
}

/** A CA in `dir` (ca.pem, ca-key.pem), valid for a year. */
export async function makeTestCa(dir: string): Promise<TestCa> {
  const certFile = join(dir, 'ca.pem');
  const keyFile = join(dir, 'ca-key.pem');
  await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '365', '-subj', '/CN=svc test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign', '-keyout', keyFile, '-out', certFile,
  ]);
  return { certFile, keyFile, pem: await readFile(certFile, 'utf8'), dir };
}

/**
 * A certificate signed by `ca` for `dnsNames` (and `ips`), valid for `days`, written as
 * `<file>.pem` and `<file>-key.pem` in the CA's directory (over any certificate of that name).
 */
export async function issueCertificate(ca: TestCa, file: string, options: { dnsNames: string[]; ips?: string[]; days: number }): Promise<TestCertificate> {
  const certFile = join(ca.dir, `${file}.pem`);
  const keyFile = join(ca.dir, `${file}-key.pem`);
  const csr = join(ca.dir, `${file}.csr`);
  const ext = join(ca.dir, `${file}.ext`);
  // 16 hex digits led by a 1: positive, without leading zeros, so openssl and Node write it alike.
  const serial = `1${randomBytes(8).toString('hex').toUpperCase().slice(1)}`;
  const altNames = [...options.dnsNames.map((name) => `DNS:${name}`), ...(options.ips ?? []).map((ip) => `IP:${ip}`)].join(',');
  await writeFile(ext, `subjectAltName=${altNames}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  await run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${options.dnsNames[0]}`, '-keyout', keyFile, '-out', csr]);
  await run('openssl', ['x509', '-req', '-in', csr, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-set_serial', `0x${serial}`, '-days', String(options.days), '-extfile', ext, '-out', certFile]);
  return { certFile, keyFile, serial };
}

export interface HttpsAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The serial of the certificate the server showed on this request's connection. */
  serial: string;
  /** The connection's local port: the same on two answers means one keep-alive connection. */
  localPort: number;
}

/** One request over HTTPS, trusting `ca`; `servername` is what SNI asks for (none for an IP address). */
export function httpsGet(
  url: string,
  options: { ca: string; servername?: string; agent?: Agent | false; method?: string; headers?: Record<string, string>; body?: string },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      {
        ca: options.ca,
        servername: options.servername,
        // Node's client offers no ALPN unless told to; a browser or curl offers what it speaks.
        ...({ ALPNProtocols: ['http/1.1'] } satisfies ConnectionOptions),
        agent: options.agent ?? false,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (response) => {
        const socket = response.socket as TLSSocket;
        const serial = socket.getPeerCertificate().serialNumber;
        const localPort = socket.localPort ?? 0;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8'), serial, localPort }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
