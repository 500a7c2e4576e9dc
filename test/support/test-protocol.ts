// `SVC_TEST_PROTOCOL=h2` (test/run.ts's HTTP/2 pass of http-caching/): every node a test starts
// (svc-harness.ts) terminates TLS with a certificate of a test CA made once per process, and the
// tests' HTTP client (http.ts's fetchRaw) speaks HTTP/2 to its data plane with node:http2, trusting
// that CA (undici's HTTP/2 client cannot send a DELETE with a body, which the suites send). The
// admin API stays plain HTTP/1.1. Tests that write raw HTTP/1.1 bytes to a socket cannot run so: they
// are skipped with RAW_HTTP1_SKIP.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate, makeTestCa } from './test-certificates.js';

/** True in the HTTP/2 pass. */
export const overH2 = process.env.SVC_TEST_PROTOCOL === 'h2';

/** A test's `skip` option: the reason in the HTTP/2 pass, false otherwise. */
export const RAW_HTTP1_SKIP: string | false = overH2 ? 'raw HTTP/1.1 bytes' : false;

interface TestTls {
  readonly tls: { certificates: { cert: string; key: string }[] };
  /** The CA's PEM text, which the client trusts. */
  readonly ca: string;
}

let made: Promise<TestTls> | undefined;

async function makeTestTls(): Promise<TestTls> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-h2-pass-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const ca = await makeTestCa(dir);
  const certificate = await issueCertificate(ca, 'localhost', { dnsNames: ['localhost'], ips: ['127.0.0.1'], days: 30 });
  return { tls: { certificates: [{ cert: certificate.certFile, key: certificate.keyFile }] }, ca: ca.pem };
}

/** The `tls` block of a node in the HTTP/2 pass (made once per process); undefined otherwise. */
export async function testTlsConfig(): Promise<TestTls['tls'] | undefined> {
  if (!overH2) return undefined;
  made ??= makeTestTls();
  return (await made).tls;
}

/** Whether a request to `url` goes over HTTP/2: in the HTTP/2 pass, to a node's https data plane. */
export function speaksH2(url: string): boolean {
  return overH2 && url.startsWith('https:');
}

/** One session per node, kept while it lasts (svc closes one idle for limits.keep_alive_timeout). */
const sessions = new Map<string, ClientHttp2Session>();

async function sessionTo(origin: string): Promise<ClientHttp2Session> {
  const open = sessions.get(origin);
  if (open !== undefined && !open.closed && !open.destroyed) return open;
  const { ca } = await made!;
  // Flow-control windows as a browser's (Chrome: 6 MiB a stream, 15 MiB the connection), not Node's
  // 64 KiB: a client that reads slower than svc fills a pass-through is cut past max_object_bytes of
  // lag, which the suites set as low as 64 KiB (streaming-limits.test.ts).
  const session = connect(origin, { ca, servername: 'localhost', settings: { initialWindowSize: 6 * 1024 * 1024 } });
  session.on('error', () => undefined);
  await once(session, 'connect');
  session.setLocalWindowSize(15 * 1024 * 1024);
  // A test process ends when its tests do, whatever sessions are still open.
  session.unref();
  sessions.set(origin, session);
  return session;
}

export interface H2Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
  /** The 1xx answers before the final one, in order. */
  informational: { statusCode: number; headers: IncomingHttpHeaders }[];
}

/** Requests `url` over HTTP/2, reads the head and the first body chunk, then resets the stream (CANCEL): a client leaving mid-body. */
export async function h2GetAndLeave(url: string): Promise<number> {
  const target = new URL(url);
  const session = await sessionTo(target.origin);
  const stream = session.request({ ':path': `${target.pathname}${target.search}` });
  stream.on('error', () => undefined);
  const [chunk] = (await once(stream, 'data')) as [Buffer];
  stream.close(constants.NGHTTP2_CANCEL);
  return chunk.length;
}

/** A request over HTTP/2 to a node of the HTTP/2 pass; `fields` as fetchRaw takes them. */
export async function h2Fetch(url: string, options: { method?: string; fields?: Record<string, string | string[]>; body?: string | Buffer }): Promise<H2Answer> {
  const target = new URL(url);
  const session = await sessionTo(target.origin);
  const headers: OutgoingHttpHeaders = { ':method': options.method ?? 'GET', ':path': `${target.pathname}${target.search}`, ...options.fields };
  const stream = session.request(headers, { endStream: options.body === undefined });
  if (options.body !== undefined) stream.end(options.body);
  const informational: H2Answer['informational'] = [];
  stream.on('headers', (head: IncomingHttpHeaders) => informational.push({ statusCode: Number(head[':status']), headers: head }));
  const [head] = (await once(stream, 'response')) as [IncomingHttpHeaders];
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(stream, 'end');
  const fields: H2Answer['headers'] = {};
  for (const [name, value] of Object.entries(head)) if (!name.startsWith(':')) fields[name] = value as string | string[];
  return { status: Number(head[':status']), headers: fields, raw: Buffer.concat(chunks), informational };
}
