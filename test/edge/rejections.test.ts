// Issue 14 item 7 and issue 21 item 8 (second half), on a real node with raw bytes: every framing
// error is counted as smuggling, every refused request is logged once with its reason, and svc's
// error answers name a status and a request id, never an internal address or a library's message.
// Issue 29 item 1: the door's refusals (exact header size, field count, request line, transfer
// coding) join the corpus, and pipelined requests are found by the door where Node's parser finds them.
import { eventually } from '../support/eventually.js';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { metricValue } from '../support/caching-fixture.js';
import { fetchRaw } from '../support/http.js';
import { MAX_LOGGED_CHARS } from '../../src/edge/rejections.js';

const GENERIC_BODY = /^svc: \d{3} [A-Za-z -]+ \(request id [0-9a-f-]{36}\)\n$/;

/** `count` short field lines (`X-F0: v`…). */
const shortFields = (count: number) => Array.from({ length: count }, (_, i) => `X-F${i}: v`);

/** A GET whose header section, request line to final CRLF, is exactly `bytes` long. */
function headOfBytes(bytes: number): string {
  const bare = rawGet('/exact', ['Host: shop.test', 'X-Pad: ']);
  return rawGet('/exact', ['Host: shop.test', `X-Pad: ${'p'.repeat(bytes - bare.length)}`]);
}

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
  /** Every data-plane refusal so far, whatever its reason: counted before the answer is sent, unlike log lines, which come in batches. */
  const allRejected = async () =>
    (await fetchRaw(`${svc.adminUrl}/metrics`)).body
      .split('\n')
      .filter((line) => line.startsWith('svc_http_requests_rejected_total{listener="data"'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  const rejectedCount = async (reason: string) =>
    metricValue((await fetchRaw(`${svc.adminUrl}/metrics`)).body, `svc_http_requests_rejected_total{listener="data",reason="${reason}"}`);
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

  const post = (coding: string) => `POST /te HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: ${coding}\r\n\r\n5\r\nhello\r\n0\r\n\r\n`;
  /** Heads the door refuses on their bytes (issue 29 item 1), with the default limits (16 KiB, 100 fields). */
  const door: [string, string, number, string][] = [
    ['1,990 short fields (22 KB, which Node counts as 14 KB)', rawGet('/many', ['Host: shop.test', ...shortFields(1_989)]), 431, 'too_many_header_fields'],
    ['a header section of max_header_bytes + 1, line ends included', headOfBytes(16_385), 431, 'header_too_large'],
    ['a value after 20,000 spaces, which Node does not count', rawGet('/pad', ['Host: shop.test', `X-Pad:${' '.repeat(20_000)}v`]), 431, 'header_too_large'],
    ['HTTP/2.0', 'GET / HTTP/2.0\r\nHost: shop.test\r\n\r\n', 505, 'version_not_supported'],
    ['HTTP/1.2', 'GET / HTTP/1.2\r\nHost: shop.test\r\n\r\n', 505, 'version_not_supported'],
    ['HTTP/0.9 named', 'GET / HTTP/0.9\r\nHost: shop.test\r\n\r\n', 505, 'version_not_supported'],
    ['no version', 'GET /x\r\nHost: shop.test\r\n\r\n', 400, 'invalid_request_line'],
    ['two spaces before the target', 'GET  /x HTTP/1.1\r\nHost: shop.test\r\n\r\n', 400, 'invalid_request_line'],
    ['two spaces before the version', 'GET /x  HTTP/1.1\r\nHost: shop.test\r\n\r\n', 400, 'invalid_request_line'],
    ['a space after the version', 'GET /x HTTP/1.1 \r\nHost: shop.test\r\n\r\n', 400, 'invalid_request_line'],
    ['Transfer-Encoding: gzip, chunked', post('gzip, chunked'), 501, 'unsupported_transfer_coding'],
    ['Transfer-Encoding: x, chunked', post('x, chunked'), 501, 'unsupported_transfer_coding'],
    ['Transfer-Encoding: identity, chunked', post('identity, chunked'), 501, 'unsupported_transfer_coding'],
    ['Transfer-Encoding: gzip and chunked on two lines', post('gzip\r\nTransfer-Encoding: chunked'), 501, 'unsupported_transfer_coding'],
  ];
  for (const [name, bytes, status, reason] of door) {
    test(`${name}: ${status}, counted once as ${reason} (not as smuggling), logged once, connection closed`, async () => {
      const [count, smuggled] = [await rejectedCount(reason), await smuggling()];
      const before = origin.requests.length;
      const answer = await sendRaw(svc.dataUrl, bytes);
      assert.equal(answer.status, status);
      assert.match(answer.body, GENERIC_BODY);
      assert.ok(answer.closed);
      assert.equal(await rejectedCount(reason), count + 1);
      assert.equal(await smuggling(), smuggled);
      const requestId = /request id ([0-9a-f-]{36})/.exec(answer.body)![1];
      const line = await svc.logs.find('the rejection line', (logged) => logged.request_id === requestId);
      assert.deepEqual([line.msg, line.reason, line.status], ['rejected', reason, status]);
      assert.equal(svc.logs.lines.filter((logged) => logged.request_id === requestId).length, 1);
      assert.equal(origin.requests.length, before, 'nothing reached the origin');
    });
  }

  test('at the field cap a request is served: 100 fields', async () => {
    assert.equal((await sendRaw(svc.dataUrl, rawGet('/fields', ['Host: shop.test', ...shortFields(99)]), { untilResponse: true })).status, 200);
  });

  test('a refused head behind a served one on the same connection: the first is answered, then the refusal', async () => {
    const answer = await sendRaw(svc.dataUrl, `${rawGet('/first', ['Host: shop.test'])}GET /second HTTP/2.0\r\nHost: shop.test\r\n\r\n`);
    assert.deepEqual(answer.text.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 200', 'HTTP/1.1 505']);
    assert.ok(answer.closed);
  });

  test('property: pipelined requests with bodies, cut anywhere, are each answered once; the door finds every head where Node\'s parser does', async () => {
    const [smuggled, refused] = [await smuggling(), await allRejected()];
    const path = fc.stringMatching(/^\/p[a-z0-9]{0,6}$/);
    const body = fc.string({ unit: fc.constantFrom('a', '\r', '\n', '0', ' ', 'G', 'T'), maxLength: 30 });
    const request = fc.oneof(
      path.map((p) => rawGet(p, ['Host: shop.test'])),
      fc.tuple(path, body).map(([p, b]) => `POST ${p} HTTP/1.1\r\nHost: shop.test\r\nContent-Length: ${b.length}\r\n\r\n${b}`),
      fc.tuple(path, fc.array(body.filter((b) => b.length > 0), { maxLength: 3 })).map(
        ([p, chunks]) =>
          `PUT ${p} HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: chunked\r\n\r\n${chunks.map((c) => `${c.length.toString(16)};n=v\r\n${c}\r\n`).join('')}0\r\nX-T: 1\r\n\r\n`,
      ),
    );
    const runs = fc.sample(fc.tuple(fc.array(request, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 4 })), { numRuns: 40 });
    for (const [requests, cuts] of runs) {
      const bytes = requests.join('');
      const points = [...new Set(cuts.map((cut) => cut % bytes.length))].filter((point) => point > 0).sort((a, b) => a - b);
      const pieces = [...points, bytes.length].map((end, i) => bytes.slice(i === 0 ? 0 : points[i - 1], end));
      const answer = await sendRaw(svc.dataUrl, pieces[0]!, {
        then: pieces.slice(1).map((piece) => ({ afterMs: 5, bytes: piece })),
        waitMs: 5_000,
        untilAnswers: requests.length,
      });
      assert.equal(answer.text.match(/HTTP\/1\.1 200/g)?.length, requests.length, JSON.stringify(pieces));
    }
    assert.equal(await smuggling(), smuggled);
    assert.equal(await allRejected(), refused);
  });

  test('a request pipelined behind an Upgrade svc does not take, in the same packet, is dropped by Node\'s parser; the door skips it too, and reads on', async () => {
    const upgrade = rawGet('/up', ['Host: shop.test', 'Connection: Upgrade', 'Upgrade: websocket']);
    const answer = await sendRaw(svc.dataUrl, `${upgrade}${rawGet('/dropped', ['Host: shop.test'])}`, {
      then: [{ afterMs: 200, bytes: rawGet('/read', ['Host: shop.test']) }],
      untilAnswers: 2,
    });
    assert.equal(answer.text.match(/HTTP\/1\.1 200/g)?.length, 2);
    assert.ok(!origin.requests.some((request) => request.url === '/dropped'));
    assert.ok(origin.requests.some((request) => request.url === '/read'));
  });

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
