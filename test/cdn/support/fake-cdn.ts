// A fake of Cloudflare's zone purge API on 127.0.0.1, written for the CDN tests: it records every call
// (path, headers, JSON body) and answers as the test says: a status with a Cloudflare-shaped body,
// a hang, or a reset connection. A call can be held until the test releases it.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FakeCdnAnswer =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  /** Accept the request and never answer. */
  | 'hang'
  /** Cut the connection with a TCP reset before answering. */
  | 'reset';

export interface FakeCdnCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export type FakeCdnHandler = (call: FakeCdnCall, index: number) => FakeCdnAnswer | Promise<FakeCdnAnswer>;

export interface FakeCdn {
  /** `http://127.0.0.1:port`: the `cdn.api_base_url` to give svc. */
  url: string;
  calls: FakeCdnCall[];
  handle(handler: FakeCdnHandler): void;
  /** Resolves once `count` calls have arrived (or rejects after `timeoutMs`). */
  waitForCalls(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** What Cloudflare answers to a purge it accepted. */
export const OK: FakeCdnAnswer = { status: 200, body: { success: true, errors: [], messages: [], result: { id: 'purge-id' } } };

/** Cloudflare's error envelope. */
export function cloudflareError(status: number, code: number, message: string, headers: Record<string, string> = {}): FakeCdnAnswer {
  return { status, headers, body: { success: false, errors: [{ code, message }], messages: [], result: null } };
}

export async function startFakeCdn(handler: FakeCdnHandler = () => OK): Promise<FakeCdn> {
  let current = handler;
  const calls: FakeCdnCall[] = [];
  const sockets = new Set<Socket>();
  const arrivals: (() => void)[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = { unreadable: Buffer.concat(chunks).toString('utf8') };
      }
      const call: FakeCdnCall = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body };
      const index = calls.length;
      calls.push(call);
      for (const arrived of arrivals.splice(0)) arrived();
      void Promise.resolve(current(call, index)).then((answer) => {
        if (answer === 'hang') return;
        if (answer === 'reset') {
          request.socket.resetAndDestroy();
          return;
        }
        const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
        response.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...answer.headers });
        response.end(text);
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    handle(next) {
      current = next;
    },
    async waitForCalls(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (calls.length < count) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`the fake CDN had ${calls.length} calls, not ${count}, after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, remaining);
          arrivals.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
