// Issue 14 item 5, on a real node with raw bytes: header size (431), header timeout (408), request
// body idle timeout (408), keep-alive idle timeout, in-flight origin requests per client (429), a
// budget of upload connections apart from the fills', and 504 when no origin connection comes in time.
// Issue 29 item 1: the header section measured in bytes exactly as received, and its field lines capped.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { startTestOrigin, type OriginReply, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw } from '../support/http.js';

/** An origin that reads every request body to its end before answering, as real ones do. */
async function readingOrigin(reply: (request: IncomingMessage) => OriginReply = () => ({ headers: { 'cache-control': 'max-age=600' }, body: 'ok' })): Promise<TestOrigin> {
  return startTestOrigin(
    (request) =>
      new Promise<OriginReply>((resolve) => {
        if (request.readableEnded) resolve(reply(request));
        else request.once('end', () => resolve(reply(request)));
      }),
  );
}

async function withNode(origin: TestOrigin, config: Record<string, unknown>, run: (svc: SvcUnderTest) => Promise<void>): Promise<void> {
  const svc = await startSvc([origin.url], { config });
  try {
    await run(svc);
  } finally {
    await svc.stop();
    await origin.close();
  }
}

async function rejectedMetric(svc: SvcUnderTest, listener: string, reason: string): Promise<number> {
  const text = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
  const line = text.split('\n').find((l) => l.startsWith(`svc_http_requests_rejected_total{listener="${listener}",reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('limits and timeouts at the edge', () => {
  test('a header section over limits.max_header_bytes is 431 on the data plane and the admin listener', async () =>
    withNode(await readingOrigin(), { limits: { max_header_bytes: 2048 } }, async (svc) => {
      const big = `X-Big: ${'a'.repeat(4096)}`;
      assert.equal((await sendRaw(svc.dataUrl, rawGet('/h', ['Host: shop.test', big]))).status, 431);
      assert.equal((await sendRaw(svc.adminUrl, rawGet('/healthz', ['Host: admin', big]))).status, 431);
      assert.equal(await rejectedMetric(svc, 'data', 'header_too_large'), 1);
      assert.equal(await rejectedMetric(svc, 'admin', 'header_too_large'), 1);
      assert.equal((await sendRaw(svc.dataUrl, rawGet('/h', ['Host: shop.test']), { untilResponse: true })).status, 200);
    }));

  test('limits.max_header_bytes is measured exactly as received: a header section of that many bytes passes, one more is 431', async () =>
    withNode(await readingOrigin(), { limits: { max_header_bytes: 2048 } }, async (svc) => {
      const head = (bytes: number, listenerHost: string, path: string) => {
        const bare = rawGet(path, [`Host: ${listenerHost}`, 'X-Pad: ']);
        return rawGet(path, [`Host: ${listenerHost}`, `X-Pad: ${'p'.repeat(bytes - bare.length)}`]);
      };
      assert.equal(head(2048, 'shop.test', '/h').length, 2048);
      assert.equal((await sendRaw(svc.dataUrl, head(2048, 'shop.test', '/h'), { untilResponse: true })).status, 200);
      assert.equal((await sendRaw(svc.dataUrl, head(2049, 'shop.test', '/h'))).status, 431);
      assert.equal((await sendRaw(svc.adminUrl, head(2048, 'admin', '/healthz'), { untilResponse: true })).status, 200);
      assert.equal((await sendRaw(svc.adminUrl, head(2049, 'admin', '/healthz'))).status, 431);
      assert.equal(await rejectedMetric(svc, 'data', 'header_too_large'), 1);
      assert.equal(await rejectedMetric(svc, 'admin', 'header_too_large'), 1);
    }));

  test('more field lines than limits.max_header_fields is 431 on the data plane and the admin listener; as many passes', async () =>
    withNode(await readingOrigin(), { limits: { max_header_fields: 10 } }, async (svc) => {
      const fields = (count: number) => Array.from({ length: count }, (_, i) => `X-F${i}: v`);
      assert.equal((await sendRaw(svc.dataUrl, rawGet('/f', ['Host: shop.test', ...fields(9)]), { untilResponse: true })).status, 200);
      const over = await sendRaw(svc.dataUrl, rawGet('/f', ['Host: shop.test', ...fields(10)]));
      assert.equal(over.status, 431);
      assert.ok(over.closed);
      assert.equal((await sendRaw(svc.adminUrl, rawGet('/healthz', ['Host: admin', ...fields(9)]), { untilResponse: true })).status, 200);
      const admin = await sendRaw(svc.adminUrl, rawGet('/healthz', ['Host: admin', ...fields(10)]));
      assert.equal(admin.status, 431);
      assert.equal((JSON.parse(admin.body) as { error: { code: string } }).error.code, 'too_many_header_fields');
      assert.equal(await rejectedMetric(svc, 'data', 'too_many_header_fields'), 1);
      assert.equal(await rejectedMetric(svc, 'admin', 'too_many_header_fields'), 1);
    }));

  test('headers that do not arrive within limits.header_timeout get 408 and a closed connection', async () =>
    withNode(await readingOrigin(), { limits: { header_timeout: '300ms' } }, async (svc) => {
      const answer = await sendRaw(svc.dataUrl, 'GET /slowloris HTTP/1.1\r\nHost: shop.test\r\nX-A: 1\r\n', { waitMs: 5_000 });
      assert.equal(answer.status, 408);
      assert.ok(answer.closed);
      assert.equal(await rejectedMetric(svc, 'data', 'header_timeout'), 1);
    }));

  test('a request body that stalls for limits.body_idle_timeout gets 408; the origin request is abandoned', async () => {
    const origin = await readingOrigin();
    await withNode(origin, { limits: { body_idle_timeout: '300ms' } }, async (svc) => {
      const answer = await sendRaw(svc.dataUrl, 'POST /stall HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 10\r\n\r\nab', { waitMs: 5_000 });
      assert.equal(answer.status, 408);
      assert.equal(answer.headers.connection, 'close');
      assert.equal(await rejectedMetric(svc, 'data', 'body_idle_timeout'), 1);
    });
  });

  test('a steady upload is not cut by the body idle timeout', async () => {
    const origin = await readingOrigin(() => ({ body: 'got it' }));
    await withNode(origin, { limits: { body_idle_timeout: '400ms' } }, async (svc) => {
      const steps = Array.from({ length: 6 }, () => ({ afterMs: 150, bytes: 'x' }));
      const answer = await sendRaw(svc.dataUrl, 'POST /steady HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 6\r\n\r\n', { untilResponse: true, waitMs: 5_000, then: steps });
      assert.equal(answer.status, 200);
      assert.equal(answer.body, 'got it');
    });
  });

  test('an idle keep-alive connection is closed after limits.keep_alive_timeout', async () =>
    withNode(await readingOrigin(), { limits: { keep_alive_timeout: '200ms' } }, async (svc) => {
      const answer = await sendRaw(svc.dataUrl, rawGet('/ka', ['Host: shop.test']), { waitMs: 5_000 });
      assert.equal(answer.status, 200);
      assert.ok(answer.closed, 'the server closed the idle connection');
    }));

  test('a client over limits.max_in_flight_per_client origin requests gets 429 with Retry-After; hits are not counted', async () => {
    const origin = await readingOrigin((request) =>
      request.url === '/cached' ? { headers: { 'cache-control': 'max-age=600' }, body: 'cached' } : { delayMs: 1_500, headers: { 'cache-control': 'no-store' }, body: 'slow' },
    );
    await withNode(origin, { limits: { max_in_flight_per_client: 2 } }, async (svc) => {
      await fetchRaw(`${svc.dataUrl}/cached`);
      const held = [fetchRaw(`${svc.dataUrl}/slow/1`), fetchRaw(`${svc.dataUrl}/slow/2`)];
      await eventually('both held at the origin', () => origin.requests.filter((request) => request.url.startsWith('/slow/')).length, (held) => held === 2);
      const over = await sendRaw(svc.dataUrl, rawGet('/slow/3', ['Host: shop.test']), { untilResponse: true });
      assert.equal(over.status, 429);
      assert.equal(over.headers['retry-after'], '1');
      assert.equal((await sendRaw(svc.dataUrl, rawGet('/cached', [`Host: ${new URL(svc.dataUrl).host}`]), { untilResponse: true })).headers['x-cache'], 'HIT');
      for (const answer of await Promise.all(held)) assert.equal(answer.status, 200);
      assert.equal((await fetchRaw(`${svc.dataUrl}/slow/4`)).status, 200, 'the budget is given back');
      assert.equal(await rejectedMetric(svc, 'data', 'client_busy'), 1);
    });
  });

  test('slow uploads hold only the upload connections: cache fills go on, a further upload gets 504 after queue_timeout', async () => {
    const origin = await readingOrigin();
    const config = {
      limits: { body_idle_timeout: '30s', max_in_flight_per_client: 100 },
      pools: [{ name: 'origin', upstreams: [origin.url], connections: 2, upload_connections: 2, queue_timeout: '300ms', response_timeout: '10s' }],
    };
    await withNode(origin, config, async (svc) => {
      // Two uploads that send one byte of ten and then nothing: they hold both upload connections.
      const stalled = [1, 2].map((i) => sendRaw(svc.dataUrl, `POST /upload/${i} HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 10\r\n\r\na`, { waitMs: 2_500 }));
      await eventually('both uploads at the origin', () => origin.requests.filter((request) => request.url.startsWith('/upload/')).length, (uploads) => uploads === 2);
      for (let i = 0; i < 4; i++) {
        const fill = await sendRaw(svc.dataUrl, rawGet(`/fill/${i}`, ['Host: shop.test']), { untilResponse: true, waitMs: 5_000 });
        assert.equal(fill.status, 200, `fill ${i}`);
        assert.equal(fill.headers['x-cache'], 'MISS');
      }
      const third = await sendRaw(svc.dataUrl, 'POST /upload/3 HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 1\r\n\r\nz', { untilResponse: true, waitMs: 5_000 });
      assert.equal(third.status, 504);
      await Promise.all(stalled);
    });
  });

  test('a miss that finds no free origin connection within queue_timeout gets 504, not an endless wait', async () => {
    const origin = await readingOrigin((request) => (request.url === '/hang' ? { hang: true } : { body: 'ok' }));
    const config = { pools: [{ name: 'origin', upstreams: [origin.url], connections: 1, queue_timeout: '300ms', response_timeout: '10s' }] };
    await withNode(origin, config, async (svc) => {
      const hanging = sendRaw(svc.dataUrl, rawGet('/hang', ['Host: shop.test']), { waitMs: 2_000 });
      await eventually('/hang at the origin', () => origin.requests.some((request) => request.url === '/hang'), (asked) => asked);
      const waiting = await sendRaw(svc.dataUrl, rawGet('/other', ['Host: shop.test']), { untilResponse: true, waitMs: 5_000 });
      assert.equal(waiting.status, 504);
      await hanging;
    });
  });
});
