// An OTLP/HTTP trace receiver on 127.0.0.1, written for the tests: it takes what svc's exporter posts
// to /v1/traces (OTLP's JSON encoding), decodes every span with its resource, and answers as the test
// says: accept, refuse with a status, or hang.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startNs: bigint;
  endNs: bigint;
}

export interface ReceivedExport {
  path: string;
  headers: IncomingHttpHeaders;
}

export type ReceiverAnswer = 'accept' | 'hang' | { status: number };

export interface OtlpReceiver {
  /** `127.0.0.1:port`, the `tracing.endpoint` to give svc. */
  endpoint: string;
  spans: ReceivedSpan[];
  exports: ReceivedExport[];
  answer(how: ReceiverAnswer): void;
  /** Resolves with the spans once `done(spans)` holds, or rejects after `timeoutMs`. */
  waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface JsonKeyValue {
  key: string;
  value: JsonValue;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
}
interface JsonExport {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}

function attributes(list: JsonKeyValue[] | undefined): Record<string, string | number | boolean> {
  const decoded: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) decoded[key] = value.stringValue;
    else if (value.intValue !== undefined) decoded[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) decoded[key] = value.doubleValue;
    else if (value.boolValue !== undefined) decoded[key] = value.boolValue;
  }
  return decoded;
}

export function decodeExport(body: JsonExport): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes: attributes(span.attributes),
          resource,
          statusCode: span.status?.code ?? 0,
          startNs: BigInt(span.startTimeUnixNano),
          endNs: BigInt(span.endTimeUnixNano),
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let how: ReceiverAnswer = 'accept';
  const spans: ReceivedSpan[] = [];
  const exports: ReceivedExport[] = [];
  const arrivals: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exports.push({ path: request.url ?? '', headers: request.headers });
      if (how === 'hang') return;
      if (how !== 'accept') {
        response.writeHead(how.status, { 'content-type': 'application/json' });
        response.end('{}');
        return;
      }
      spans.push(...decodeExport(JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonExport));
      for (const arrived of arrivals.splice(0)) arrived();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `127.0.0.1:${port}`,
    spans,
    exports,
    answer(next) {
      how = next;
    },
    async waitFor(done, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(spans)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for spans; received: ${spans.map((s) => s.name).join(', ') || 'none'}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200));
          arrivals.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
