// Issue 14 item 1: no input on any listener can crash the process. Random request lines, methods,
// targets, header names and values, framings and bodies are sent as raw bytes to the data plane, the
// admin API and the cluster listener's HTTP path of one real node (strong mode, so peer fetch is
// served); after each batch the node must still answer /healthz and a plain GET. The node runs in
// this process: an uncaught exception anywhere fails the test run.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { freePort } from '../../bench/support/free-port.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { fetchRaw } from '../support/http.js';
import { CLUSTER_SECRET } from '../support/svc-cluster.js';

const TOKEN = 'test-admin-token-0123456789';
/** Cases per listener, sent in batches with a few connections at a time. */
const CASES = 2_000;
const BATCH = 100;
const CONCURRENCY = 32;

/** Targets that crashed or confused svc before (issue 14), and classic parser traps. */
const WEIRD_TARGETS = ['//a:99999', '//[', '//%', 'http://', 'http://[', 'https://a', '*', '/%', '/%zz', '/..', '//', '/a#b', 'http://a:99999/', 'http://u@a/', 'a:443', '/\\a', '/?%'];

const ADMIN_PATHS = [
  '/healthz',
  '/readyz?detail=1',
  '/version',
  '/metrics',
  '/v1/cluster/peers',
  '/v1/purge',
  '/v1/purge/batch',
  '/v1/ban',
  '/v1/refresh',
  '/v1/auth/check',
  '/v1/stats?url=http://a/b',
  '/v1/config',
  '/v1/debug/cachecheck?url=http://a/b',
  '/v1/invalidations/recent',
];
const PEER_PATHS = ['/v1/peer/fetch', '/v1/peer/purge', '/v1/peer/ban', '/v1/peer/refresh', '/v1/peer/swim/push-pull', '/v1/peer/swim/broadcasts', '/v1/peer/%zz'];

const visible = (max: number) => fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: max });
const fieldText = (max: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: max });
const latin1 = (max: number) => fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((code) => String.fromCharCode(code)), maxLength: max });
const ascii = (max: number) => fc.string({ unit: 'binary-ascii', maxLength: max });
const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/);

const headerName = fc.oneof(
  fc.constantFrom(
    'Host',
    'Content-Length',
    'Transfer-Encoding',
    'Expect',
    'Connection',
    'Content-Type',
    'Authorization',
    'X-Forwarded-For',
    'X-Forwarded-Proto',
    'X-Forwarded-Host',
    'Forwarded',
    'Range',
    'If-None-Match',
    'Cache-Control',
    'Accept-Language',
    'x-svc-peer-hop',
    'svc-peer-from',
    'Upgrade',
  ),
  token,
  latin1(10),
);
const headerValue = fc.oneof(
  fc.constantFrom('100-continue', 'chunked', 'close, host', 'keep-alive', 'application/json', `Bearer ${TOKEN}`, 'https', '0', '-1', '99999999999999999999', 'bytes=0-1', 'max-age=0', '[', 'a:99999', '*', 'websocket'),
  ascii(30),
  latin1(30),
);

/** Fields that parse, framing left to `framing` so most requests reach a handler. */
const parsableName = headerName.filter((name) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) && !/^(host|content-length|transfer-encoding)$/i.test(name));
const parsableValue = headerValue.filter((value) => /^[\x20-\x7e]*$/.test(value));

interface FuzzRequest {
  method: string;
  target: string;
  version: string;
  headers: [string, string][];
  host: string | null;
  body: string;
  framing: 'length' | 'chunked' | 'none' | 'wrong-length';
  lineEnd: string;
  /**
   * Byte soup is sent with the sending side closed at once, so a request cut short ends at once too;
   * a parsable request waits for its answer (Node drops an answer still to come once the client
   * half-closes, which would leave svc's own code paths unexercised).
   */
  halfClose: boolean;
}

/**
 * Three in four requests get past Node's parser (valid methods, visible-ASCII targets and fields, one
 * framing) so that they reach svc's own code; the rest are byte soup for the parser itself.
 */
function requestArbitrary(paths: readonly string[]): fc.Arbitrary<FuzzRequest> {
  const parsable = fc.record({
    method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PURGE', 'TRACE', 'PROPFIND'),
    target: fc.oneof(
      { arbitrary: fc.constantFrom(...paths), weight: 4 },
      { arbitrary: visible(40).map((text) => `/${text}`), weight: 4 },
      { arbitrary: fc.constantFrom(...WEIRD_TARGETS), weight: 1 },
      { arbitrary: visible(30), weight: 1 },
      { arbitrary: fc.webUrl({ withQueryParameters: true }), weight: 1 },
    ),
    version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'),
    headers: fc.array(fc.tuple(parsableName, fc.oneof(parsableValue, fieldText(30))), { maxLength: 6 }),
    host: fc.option(fc.oneof({ arbitrary: fc.constantFrom('shop.test', 'SHOP.test:80', '[::1]:8080', '127.0.0.1'), weight: 6 }, { arbitrary: fc.constantFrom('[', 'a:99999', 'shop.test/static'), weight: 1 }, { arbitrary: visible(20), weight: 1 }), { freq: 10, nil: null }),
    body: fc.oneof(fc.constant(''), fieldText(64), fc.json({ maxDepth: 2 }).map((json) => JSON.stringify({ url: 'http://shop.test/a', urls: [json], surrogate_key: json }))),
    framing: fc.constantFrom<FuzzRequest['framing']>('length', 'length', 'chunked', 'none'),
    lineEnd: fc.constant('\r\n'),
    halfClose: fc.constant(false),
  });
  const chaotic = fc.record({
    method: fc.oneof(fc.constantFrom('GET', 'POST', 'CONNECT'), token, latin1(8)),
    target: fc.oneof(fc.constantFrom(...WEIRD_TARGETS, ...paths), latin1(40), fc.webUrl({ withFragments: true })),
    version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', ''),
    headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 }),
    host: fc.option(latin1(20), { nil: null }),
    body: latin1(64),
    framing: fc.constantFrom<FuzzRequest['framing']>('length', 'chunked', 'none', 'wrong-length'),
    lineEnd: fc.constantFrom('\r\n', '\n'),
    halfClose: fc.constant(true),
  });
  return fc.oneof({ arbitrary: parsable, weight: 3 }, { arbitrary: chaotic, weight: 1 });
}

function bytesOf(request: FuzzRequest): Buffer {
  const { lineEnd: end } = request;
  let text = `${request.method} ${request.target} ${request.version}${end}`;
  if (request.host !== null) text += `Host: ${request.host}${end}`;
  for (const [name, value] of request.headers) text += `${name}: ${value}${end}`;
  let body = request.body;
  if (request.framing === 'length') text += `Content-Length: ${Buffer.byteLength(body, 'latin1')}${end}`;
  else if (request.framing === 'wrong-length') text += `Content-Length: ${Buffer.byteLength(body, 'latin1') + 7}${end}`;
  else if (request.framing === 'chunked') {
    text += `Transfer-Encoding: chunked${end}`;
    body = body === '' ? '0\r\n\r\n' : `${Buffer.byteLength(body, 'latin1').toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  }
  return Buffer.from(`${text}${end}${body}`, 'latin1');
}

async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe('no request can crash a node (fuzz, raw bytes over sockets)', { timeout: 180_000 }, () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  let clusterUrl: string;
  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': request.url?.includes('nc') ? 'no-store' : 'max-age=5' }, body: 'fuzzed' }));
    const gossipPort = await freePort();
    svc = await startSvc([origin.url], {
      config: {
        hop_limit: 2,
        cluster: { mode: 'strong', node_name: 'fuzz', secret: CLUSTER_SECRET, bind: `127.0.0.1:${gossipPort}` },
        limits: { header_timeout: '2s', body_idle_timeout: '2s' },
      },
    });
    clusterUrl = `http://127.0.0.1:${gossipPort}`;
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  async function stillServing(): Promise<void> {
    assert.equal((await fetchRaw(`${svc.adminUrl}/healthz`)).status, 200, 'the admin listener answers');
    const plain = await sendRaw(svc.dataUrl, rawGet('/still-serving', ['Host: shop.test']), { untilResponse: true });
    assert.equal(plain.status, 200, 'the data plane answers');
  }

  test('the cluster listener has the edge\'s header limits too: 431 for an oversized header section', async () => {
    const answer = await sendRaw(clusterUrl, rawGet('/v1/peer/purge', ['Host: peer', `X-Big: ${'a'.repeat(20_000)}`]));
    assert.equal(answer.status, 431);
  });

  const listeners: [string, () => string, readonly string[]][] = [
    ['data plane', () => svc.dataUrl, ['/', '/a?b=1', '/nc', '/static/app.js']],
    ['admin', () => svc.adminUrl, ADMIN_PATHS],
    ['cluster', () => clusterUrl, PEER_PATHS],
  ];
  for (const [name, url, paths] of listeners) {
    test(`${name}: ${CASES} random requests, and the node still answers after each batch`, async () => {
      const requests = fc.sample(requestArbitrary(paths), { numRuns: CASES });
      for (let start = 0; start < requests.length; start += BATCH) {
        await inParallel(requests.slice(start, start + BATCH), CONCURRENCY, (request) =>
          sendRaw(url(), bytesOf(request), { halfClose: request.halfClose, untilHead: !request.halfClose, waitMs: 600 }),
        );
        await stillServing();
      }
    });
  }
});
