// Issue 14 item 7 and issue 21 item 8 (second half), on a real node with raw bytes: every framing
// error is counted as smuggling, every refused request is logged once with its reason, and svc's
// error answers name a status and a request id, never an internal address or a library's message.
import { eventually } from '../support/eventually.js';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { metricValue } from '../support/caching-fixture.js';
import { fetchRaw } from '../support/http.js';
import { MAX_LOGGED_CHARS } from '../../src/edge/rejections.js';

const GENERIC_BODY = /^svc: \d{3} [A-Za-z -]+ \(request id [0-9a-f-]{36}\)\n$/;

describe('framing errors, rejections and error answers', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  before(async () => {
    origin = await startTestOrigin((request) => (request.url === '/slow' ? { hang: true } : { body: 'ok' }));
    svc = await startSvc([origin.url], { config: { pools: [{ name: 'origin', upstreams: [origin.url], response_timeout: '300ms' }] } });
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });
  const smuggling = async () => metricValue((await fetchRaw(`${svc.adminUrl}/metrics`)).body, 'svc_http_smuggling_rejected_total');
  const rejected = () => svc.logs.lines.filter((line) => line.msg === 'rejected');
  /**
   * The rejection lines logged after the first `from`, once there are at least `count`: the thread
   * that refused a request logs it, and the line is relayed to the node's output a moment later.
   */
  const rejectedSince = (from: number, count: number) =>
    eventually(`${count} rejection lines`, () => rejected().slice(from), (lines) => lines.length >= count);

  const framing: [string, string][] = [
    ['obs-fold', 'GET / HTTP/1.1\r\nHost: shop.test\r\nX-A: 1\r\n  folded\r\n\r\n'],
    ['bare LF', 'GET / HTTP/1.1\nHost: shop.test\n\n'],
    ['bare LF after a field', 'GET / HTTP/1.1\r\nHost: shop.test\nX-A: 1\r\n\r\n'],
    ['space before the colon', 'POST / HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n'],
    ['NUL in a value', 'GET / HTTP/1.1\r\nHost: shop.test\r\nX-A: a\u0000b\r\n\r\n'],
    ['CR in a value', 'GET / HTTP/1.1\r\nHost: shop.test\r\nX-A: a\rb\r\n\r\n'],
    ['Content-Length with Transfer-Encoding', 'POST / HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['two Content-Lengths', 'POST / HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'],
    ['a Transfer-Encoding other than chunked last', 'POST / HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n'],
    ['a bad chunk size', 'POST / HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
  ];
  for (const [name, bytes] of framing) {
    test(`${name}: 400, counted as smuggling, logged once as such, connection closed`, async () => {
      const count = await smuggling();
      const lines = rejected().length;
      const answer = await sendRaw(svc.dataUrl, bytes);
      assert.equal(answer.status, 400);
      assert.match(answer.body, GENERIC_BODY);
      assert.ok(answer.closed);
      assert.equal(await smuggling(), count + 1);
      const logged = await rejectedSince(lines, 1);
      assert.equal(logged.length, 1);
      assert.equal(logged[0]!.reason, 'smuggling');
      assert.equal(logged[0]!.status, 400);
      assert.equal(logged[0]!.request_id, /request id ([0-9a-f-]{36})/.exec(answer.body)![1]);
    });
  }

  test('a request line that is merely malformed is 400 and logged, not counted as smuggling', async () => {
    const count = await smuggling();
    const lines = rejected().length;
    const answer = await sendRaw(svc.dataUrl, 'G@T / HTTP/1.1\r\nHost: shop.test\r\n\r\n');
    assert.equal(answer.status, 400);
    assert.equal(await smuggling(), count);
    assert.equal((await rejectedSince(lines, 1)).at(-1)!.reason, 'malformed');
  });

  test('every refusal of a run is logged exactly once, with its reason and no query string', async () => {
    const lines = rejected().length;
    const sent: [string, string][] = [
      [rawGet('/a?secret=1', ['Host: a', 'Host: b']), 'repeated_host'],
      [rawGet('/a?secret=1', ['Host: bad host']), 'invalid_host'],
      [rawGet('/a?secret=1', ['Host: shop.test']).replace('GET', 'TRACE'), 'method_not_allowed'],
      ['CONNECT shop.test:443 HTTP/1.1\r\nHost: shop.test:443\r\n\r\n', 'connect'],
    ];
    for (const [bytes] of sent) await sendRaw(svc.dataUrl, bytes, { untilResponse: true });
    const logged = await rejectedSince(lines, sent.length);
    // Sorted: each connection may land on another data-plane thread, whose batch of lines comes in its own time.
    assert.deepEqual(
      logged.map((line) => line.reason).sort(),
      sent.map(([, reason]) => reason).sort(),
    );
    for (const line of logged) assert.ok(!JSON.stringify(line).includes('secret'), JSON.stringify(line));
  });

  test('client text in a rejection line is clipped, so a flood of 16 KiB requests does not write 16 KiB each', async () => {
    const lines = rejected().length;
    await sendRaw(svc.dataUrl, rawGet(`/${'p'.repeat(8_000)}`, [`Host: ${'h'.repeat(4_000)}`]), { untilResponse: true });
    const line = (await rejectedSince(lines, 1)).at(-1)!;
    assert.equal(line.reason, 'invalid_host');
    assert.ok(String(line.path).length <= MAX_LOGGED_CHARS + 1 && String(line.host).length <= MAX_LOGGED_CHARS + 1);
  });

  test('an origin that times out: 504 whose body names no origin; the detail is in the log under its request id', async () => {
    const answer = await sendRaw(svc.dataUrl, rawGet('/slow', ['Host: shop.test']), { untilResponse: true, waitMs: 5_000 });
    assert.equal(answer.status, 504);
    assert.match(answer.body, GENERIC_BODY);
    assert.doesNotMatch(answer.body, new RegExp(String(origin.port)));
    const requestId = /request id ([0-9a-f-]{36})/.exec(answer.body)![1];
    const line = await svc.logs.find('the line of the request', (logged) => logged.request_id === requestId);
    assert.equal(line.msg, 'request failed');
    assert.match(String(line.detail), new RegExp(`127\\.0\\.0\\.1:${origin.port}`));
  });

  test('the admin listener answers its refusals in the API\'s JSON shape with a request id', async () => {
    const answer = await sendRaw(svc.adminUrl, 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', { untilResponse: true });
    assert.equal(answer.status, 400);
    const error = (JSON.parse(answer.body) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'repeated_host');
    assert.match(error.message, /request id [0-9a-f-]{36}/);
  });
});
