// Issue 15 item 6: no listener or closure accumulates per chunk or per back-pressure wait. A 50 MiB body
// streams through svc to a client that reads slowly enough to push back many times; the listeners on
// the client's response and socket are counted all along (Node's `http.server.request.start`
// diagnostics channel hands the test the data plane's own response objects) and must not grow.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pacedGet } from '../support/paced-client.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';

const BODY_BYTES = 50 * 1024 * 1024;
const RESPONSE_EVENTS = ['drain', 'close', 'error', 'finish'] as const;
const SOCKET_EVENTS = ['drain', 'close', 'error', 'end', 'timeout'] as const;

describe('listeners while a large body streams to a slow client', { timeout: 120_000 }, () => {
  let origin: Server;
  let svc: SvcUnderTest;
  before(async () => {
    const body = Buffer.alloc(BODY_BYTES, 0x61);
    origin = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': String(BODY_BYTES) });
      response.end(body);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    // The default max_object_bytes (8 MiB): the body passes, so the fill also pauses and resumes the
    // origin. One thread: the diagnostics channel hands over the response objects of this thread only.
    svc = await startSvc([`http://127.0.0.1:${(origin.address() as AddressInfo).port}`], { config: { workers: 1 } });
  });
  after(async () => {
    await svc.stop();
    await new Promise<void>((resolve) => {
      origin.close(() => resolve());
      origin.closeAllConnections();
    });
  });

  test('50 MiB to a reader at 20 MiB/s: the counts on its response and socket stay constant', async (context) => {
    const dataPort = Number(new URL(svc.dataUrl).port);
    let response: ServerResponse | undefined;
    const onRequest = (message: unknown): void => {
      const started = message as { response: ServerResponse; server: Server };
      if ((started.server.address() as AddressInfo | null)?.port === dataPort) response = started.response;
    };
    subscribe('http.server.request.start', onRequest);
    const client = pacedGet(`${svc.dataUrl}/large`, 20 * 1024 * 1024);
    try {
      await client.head;
      assert.ok(response, 'the data plane answered the request');
      const served = response;
      let drains = 0;
      served.on('drain', () => (drains += 1));
      const seen = new Map<string, Set<number>>();
      const sample = (): void => {
        if (served.writableEnded) return;
        for (const event of RESPONSE_EVENTS) record(seen, `response ${event}`, served.listenerCount(event));
        const socket = served.socket;
        if (socket) for (const event of SOCKET_EVENTS) record(seen, `socket ${event}`, socket.listenerCount(event));
      };
      const sampler = setInterval(sample, 10);
      sample();
      await new Promise<void>((resolve, reject) => {
        const check = setInterval(() => {
          if (client.received() >= BODY_BYTES) {
            clearInterval(check);
            resolve();
          }
        }, 50);
        void client.closed.then(() => {
          clearInterval(check);
          if (client.received() < BODY_BYTES) reject(new Error(`the connection closed after ${client.received()} bytes`));
          else resolve();
        });
      });
      clearInterval(sampler);
      assert.ok(drains >= 20, `the client pushed back ${drains} times`);
      for (const [what, counts] of seen) assert.equal(counts.size, 1, `${what} listeners took the counts ${[...counts].join(', ')}`);
      context.diagnostic(`${drains} back-pressure waits; listener counts: ${[...seen].map(([what, counts]) => `${what} ${[...counts][0]}`).join(', ')}`);
    } finally {
      unsubscribe('http.server.request.start', onRequest);
      client.destroy();
    }
  });
});

function record(seen: Map<string, Set<number>>, what: string, count: number): void {
  let counts = seen.get(what);
  if (!counts) seen.set(what, (counts = new Set()));
  counts.add(count);
}
