// A small origin for trying svc: each path shows one caching behaviour, told by its headers.
import { createServer, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';

interface Page {
  headers: Record<string, string>;
  body: () => string;
  delayMs?: number;
}

const pages: Record<string, Page> = {
  '/': {
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=60' },
    body: () =>
      '<!doctype html><title>svc demo origin</title><h1>svc demo origin</h1><ul>' +
      ['/hello', '/time', '/products/1', '/private', '/no-store', '/slow'].map((p) => `<li><a href="${p}">${p}</a>`).join('') +
      '</ul>',
  },
  '/hello': {
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'max-age=30', 'surrogate-key': 'demo hello' },
    body: () => 'Hello from the demo origin.\n',
  },
  '/time': {
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'max-age=5, stale-while-revalidate=10' },
    body: () => `${new Date().toISOString()}\n`,
  },
  '/private': {
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'private, max-age=60' },
    body: () => 'Only for you: svc never stores this.\n',
  },
  '/no-store': {
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    body: () => 'Never stored anywhere.\n',
  },
  '/slow': {
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'max-age=60' },
    body: () => 'Slow to make, fast once cached.\n',
    delayMs: 500,
  },
};

function productPage(id: string): Page {
  return {
    headers: {
      'content-type': 'application/json',
      'cache-control': 'max-age=300',
      'surrogate-key': `product-${id} products`,
    },
    body: () => JSON.stringify({ id, name: `Product ${id}`, price: Number(id) * 10 }) + '\n',
  };
}

export interface DemoOrigin {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startDemoOrigin(host = '127.0.0.1', port = 8081): Promise<DemoOrigin> {
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://origin.invalid').pathname;
    const product = /^\/products\/(\d{1,9})$/.exec(path);
    const page = product ? productPage(product[1]!) : pages[path];
    if (!page) {
      response.writeHead(404, { 'content-type': 'text/plain', 'cache-control': 'max-age=10' });
      response.end('not found\n');
      return;
    }
    const answer = (): void => {
      const body = page.body();
      const etag = `"${createHash('sha1').update(body).digest('base64url').slice(0, 16)}"`;
      if (request.headers['if-none-match'] === etag) {
        response.writeHead(304, { etag, 'cache-control': page.headers['cache-control'] ?? '' });
        response.end();
        return;
      }
      response.writeHead(200, { ...page.headers, etag, date: new Date().toUTCString(), 'content-length': Buffer.byteLength(body) });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (page.delayMs) setTimeout(answer, page.delayMs);
    else answer();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
