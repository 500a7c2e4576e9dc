// The soak's origin: a node:http server on loopback answering the paths of soak-content.ts, a 304
// to a revalidation whose ETag still matches, and 404 to anything else. It counts what it was asked.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectedBody, LANGUAGES, originHeaders, parsePath } from './soak-content.js';

export interface SoakOrigin {
  url: string;
  /** Requests answered, by status. */
  readonly answered: Map<number, number>;
  close(): Promise<void>;
}

export async function startSoakOrigin(): Promise<SoakOrigin> {
  const answered = new Map<number, number>();
  const count = (status: number): void => void answered.set(status, (answered.get(status) ?? 0) + 1);
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    const parsed = parsePath(path);
    if (parsed === undefined || request.method !== 'GET') {
      count(404);
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not a soak path\n');
      return;
    }
    const headers = originHeaders(parsed.kind, path, parsed.rank);
    if (headers.etag !== undefined && request.headers['if-none-match'] === headers.etag) {
      count(304);
      response.writeHead(304, headers).end();
      return;
    }
    const asked = String(request.headers['accept-language'] ?? '');
    const language = parsed.kind === 'vary' ? ((LANGUAGES as readonly string[]).includes(asked) ? asked : 'en') : '';
    const body = expectedBody(parsed.kind, path, language);
    count(200);
    response.writeHead(200, { ...headers, 'content-type': 'text/plain', 'content-length': body.length }).end(body);
  });
  // svc keeps its origin connections open between requests.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
