// An HTTP/2 client for tests (node:http2): one session over TLS trusting the test CA, and requests on
// it answering status, fields and the whole body.
import { connect, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { once } from 'node:events';

export interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A session to `origin` (`https://localhost:port`) trusting `ca`, once its handshake is done. */
export async function h2Session(origin: string, ca: string): Promise<ClientHttp2Session> {
  const session = connect(origin, { ca, servername: 'localhost' });
  session.on('error', () => undefined);
  await once(session, 'connect');
  return session;
}

/** One request on `session`: `headers` may hold `:method` and any field. */
export async function h2Request(session: ClientHttp2Session, path: string, headers: OutgoingHttpHeaders = {}, body?: string): Promise<H2Answer> {
  const stream = session.request({ ':path': path, ...headers }, { endStream: body === undefined });
  if (body !== undefined) stream.end(body);
  const [responseHeaders] = (await once(stream, 'response')) as [IncomingHttpHeaders];
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(stream, 'end');
  return { status: Number(responseHeaders[':status']), headers: responseHeaders, body: Buffer.concat(chunks).toString('utf8') };
}
