// An origin server whose every answer the test decides, recording what it was asked.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OriginReply {
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (for timeouts). */
  hang?: boolean;
  /** Send the head and part of the body, then cut the connection. */
  cutAfterBytes?: number;
  /** Informational answers sent before the final one: 103 Early Hints (with these fields) or 102 Processing. */
  informational?: { status: 102 | 103; headers?: Record<string, string | string[]> }[];
  /** Trailer fields sent after a chunked body. */
  trailers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The fields in the order they came: name, value, name, value… */
  rawHeaders: string[];
}

export type OriginHandler = (request: IncomingMessage, index: number) => OriginReply | Promise<OriginReply>;

export interface TestOrigin {
  url: string;
  port: number;
  requests: RecordedRequest[];
  handle(handler: OriginHandler): void;
  close(): Promise<void>;
}

export async function startTestOrigin(handler: OriginHandler = () => ({ body: 'ok' })): Promise<TestOrigin> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer(async (request, response) => {
    const index = requests.length;
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, rawHeaders: request.rawHeaders });
    request.resume();
    const reply = await current(request, index);
    if (reply.hang) return;
    for (const info of reply.informational ?? []) {
      if (info.status === 103) response.writeEarlyHints(info.headers ?? {});
      else response.writeProcessing();
    }
    // The behaviour a test asks for: a slow origin.
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    const body = reply.body === undefined ? Buffer.alloc(0) : Buffer.from(reply.body);
    if (reply.cutAfterBytes !== undefined) {
      response.writeHead(reply.status ?? 200, { 'content-length': String(body.length), ...reply.headers });
      response.write(body.subarray(0, reply.cutAfterBytes), () => response.socket?.destroy());
      return;
    }
    const headers: Record<string, string | string[]> = { ...reply.headers };
    const status = reply.status ?? 200;
    if (reply.trailers) {
      headers['transfer-encoding'] = 'chunked';
      headers.trailer = Object.keys(reply.trailers).join(', ');
    }
    if (status !== 204 && status !== 304 && !Object.keys(headers).some((h) => h.toLowerCase() === 'transfer-encoding')) {
      headers['content-length'] ??= String(body.length);
    }
    response.writeHead(status, headers);
    if (reply.trailers && request.method !== 'HEAD') {
      response.write(body);
      response.addTrailers(reply.trailers);
      response.end();
      return;
    }
    response.end(request.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    handle(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
