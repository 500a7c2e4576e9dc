// One slow client pays for itself alone (DESIGN principle 12, issue 15 item 1): a first client reading
// at modem speed does not hold up the requests that wait on its fill, a client that stops reading is
// cut off by the write-idle timeout while the fill completes and is stored, and an uncacheable URL
// leaves a hit-for-pass marker so the next wave of requests does not queue behind one fill.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { metricValue } from '../support/caching-fixture.js';
import { pacedGet } from '../support/paced-client.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';

/**
 * Larger than what the kernel buffers between svc and a client that stops reading (loopback send and
 * receive buffers grow to about 10 MiB), so such a client really pushes back on svc.
 */
const BODY_BYTES = 24 * 1024 * 1024;
const body = Buffer.alloc(BODY_BYTES);
for (let i = 0; i < BODY_BYTES; i++) body[i] = (i * 131 + (i >> 12)) & 0xff;
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** The largest buffer Linux may grow a TCP socket's `kind` side to (net.ipv4.tcp_rmem / tcp_wmem), else 0. */
function tcpBufferMax(kind: 'rmem' | 'wmem'): number {
  try {
    return Number(readFileSync(`/proc/sys/net/ipv4/tcp_${kind}`, 'latin1').trim().split(/\s+/)[2]) || 0;
  } catch {
    return 0;
  }
}
/**
 * The body of the client that stops reading: more than the kernel can hold between svc and that
 * client however far it grows the buffers (receive autotuning reaches tcp_rmem's maximum, 32 MiB on
 * some kernels, where a 24 MiB body fit whole and nothing was ever cut), so svc's writes really stall.
 */
const STALLED_BYTES = Math.max(BODY_BYTES, tcpBufferMax('rmem') + tcpBufferMax('wmem') + 16 * 1024 * 1024);
const stalledBody = Buffer.alloc(STALLED_BYTES, 0x5a);

interface HeldOrigin {
  server: Server;
  url: string;
  requests: string[];
  /** Sends the rest of every held body. */
  release(): void;
  close(): Promise<void>;
}

/** An origin that sends the head and the first MiB of `/held*` paths, then the rest when released. */
async function startHeldOrigin(): Promise<HeldOrigin> {
  const held: ServerResponse[] = [];
  let released = false;
  const requests: string[] = [];
  const server = createServer((incoming, response) => {
    requests.push(incoming.url ?? '');
    incoming.resume();
    if (incoming.url === '/stalled') {
      response.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': String(STALLED_BYTES) });
      response.end(stalledBody);
      return;
    }
    response.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': String(BODY_BYTES) });
    if (!(incoming.url ?? '').startsWith('/held') || released) {
      response.end(body);
      return;
    }
    response.write(body.subarray(0, 1024 * 1024));
    held.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    release() {
      released = true;
      for (const response of held.splice(0)) response.end(body.subarray(1024 * 1024));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('one slow client pays for itself alone', { timeout: 120_000 }, () => {
  let origin: HeldOrigin;
  let svc: SvcUnderTest;
  /** The same node with a 1 s write-idle timeout, for the client that stops reading. */
  let impatient: SvcUnderTest;
  before(async () => {
    origin = await startHeldOrigin();
    svc = await startSvc([origin.url], { config: { max_object_bytes: 32 * 1024 * 1024 } });
    impatient = await startSvc([origin.url], { config: { max_object_bytes: STALLED_BYTES + 1024 * 1024, client_write_idle_timeout: '1s' } });
  });
  after(async () => {
    await svc.stop();
    await impatient.stop();
    await origin.close();
  });

  test('a first client reading 1 KiB/s does not slow 20 waiters: they read the fill at origin speed', async (context) => {
    const slow = pacedGet(`${svc.dataUrl}/held/waiters`, 1024);
    try {
      assert.match(await slow.head, /x-cache: MISS/i);
      // 20 requests for the key while its fill is busy: each gets its head at once, from the fill. They
      // close their connections after, so that none idles past svc's keep-alive while others still read.
      const waiters = await Promise.all(Array.from({ length: 20 }, () => request(`${svc.dataUrl}/held/waiters`, { reset: true })));
      for (const waiter of waiters) assert.equal(waiter.headers['x-cache'], 'HIT');
      const releasedAt = Date.now();
      origin.release();
      const bodies = await Promise.all(waiters.map(async (waiter) => Buffer.from(await waiter.body.arrayBuffer())));
      const elapsedMs = Date.now() - releasedAt;
      for (const received of bodies) assert.equal(sha256(received), sha256(body));
      assert.ok(slow.received() < BODY_BYTES / 4, `the first client is still reading (${slow.received()} bytes so far)`);
      context.diagnostic(`20 waiters read ${BODY_BYTES / 1024 / 1024} MiB each in ${elapsedMs} ms after the origin sent it; the first client had read ${slow.received()} bytes`);
      // The fill did not wait for its first client either: the object is stored already.
      const hit = await fetchRaw(`${svc.dataUrl}/held/waiters`);
      assert.equal(header(hit, 'x-cache'), 'HIT');
      assert.equal(sha256(hit.raw), sha256(body));
      assert.equal(origin.requests.filter((url) => url === '/held/waiters').length, 1);
    } finally {
      slow.destroy();
    }
  });

  test('a client that stops reading is cut off by the write-idle timeout; the fill completes and is stored', async () => {
    const cuts = async (): Promise<number> =>
      metricValue((await fetchRaw(`${impatient.adminUrl}/metrics`)).body, 'svc_fill_clients_cut_total{reason="write_idle"}');
    assert.equal(await cuts(), 0);
    const stalled = pacedGet(`${impatient.dataUrl}/stalled`, 0);
    try {
      assert.match(await stalled.head, /x-cache: MISS/i);
      await eventually('the stalled client to be cut', cuts, (cut) => cut >= 1, { timeoutMs: 30_000, everyMs: 50 });
      const hit = await fetchRaw(`${impatient.dataUrl}/stalled`);
      assert.equal(header(hit, 'x-cache'), 'HIT');
      assert.equal(sha256(hit.raw), sha256(stalledBody));
      stalled.drain();
      await stalled.closed;
      // One client, one cut, on whichever thread its key's home is: when another thread's fill read
      // the answer for it, that thread's internal connection was cut as well, and counted (about 1
      // run in 3 read 2, never with one thread).
      assert.equal(await cuts(), 1);
      assert.ok(stalled.received() < STALLED_BYTES, `the stalled client got ${stalled.received()} of ${STALLED_BYTES} bytes`);
      assert.equal(origin.requests.filter((url) => url === '/stalled').length, 1);
    } finally {
      stalled.destroy();
    }
  });
});

describe('hit-for-pass', { timeout: 60_000 }, () => {
  let originServer: Server;
  let svc: SvcUnderTest;
  let inFlight = 0;
  let mostInFlight = 0;
  before(async () => {
    originServer = createServer((incoming, response) => {
      incoming.resume();
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      // The behaviour under test: a slow origin, so that requests that waited on one another would
      // show as fewer than ten at the origin at once.
      setTimeout(() => {
        inFlight -= 1;
        response.writeHead(200, { 'cache-control': 'private', 'content-length': '8' });
        response.end('personal');
      }, 300);
    });
    await new Promise<void>((resolve) => originServer.listen(0, '127.0.0.1', resolve));
    svc = await startSvc([`http://127.0.0.1:${(originServer.address() as AddressInfo).port}`]);
  });
  after(async () => {
    await svc.stop();
    await new Promise<void>((resolve) => {
      originServer.close(() => resolve());
      originServer.closeAllConnections();
    });
  });

  test('after an uncacheable answer, the next wave of requests goes to the origin at once, none waiting on another', async () => {
    const first = await fetchRaw(`${svc.dataUrl}/private`);
    assert.equal(header(first, 'x-cache'), 'BYPASS');
    mostInFlight = 0;
    const wave = await Promise.all(Array.from({ length: 10 }, () => fetchRaw(`${svc.dataUrl}/private`)));
    for (const answer of wave) {
      assert.equal(answer.body, 'personal');
      assert.equal(header(answer, 'x-cache'), 'BYPASS');
    }
    assert.equal(mostInFlight, 10, 'all ten were at the origin together');
  });
});
