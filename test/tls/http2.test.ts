// Issue 32 part 2: svc speaks HTTP/2 (RFC 9113) on its TLS data plane. One node on the defaults (a
// data-plane thread per core, each with its listener, a key's misses answered by its home thread):
// h2 clients get the caching HTTP/1.1 clients get, from the same entries; malformed requests are
// refused and counted with HTTP/1.1's refusals; rapid reset and CONTINUATION floods close the session
// and harm nothing else.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { once } from 'node:events';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startTestOrigin, type OriginReply, type TestOrigin } from '../support/test-origin.js';
import { parseExposition, valueOf } from '../support/svc-metrics.js';
import { httpsGet, issueCertificate, makeTestCa, type TestCa } from '../support/test-certificates.js';
import { h2Request, h2Session } from '../support/h2-client.js';
import { eventually } from '../support/eventually.js';
import {
  continuationFrame,
  dataFrame,
  ErrorCode,
  errorCodeOf,
  FrameType,
  headerBlock,
  headersFrame,
  headersFrames,
  RawH2Connection,
  requestFields,
  rstStreamFrame,
} from '../support/h2-frames.js';

describe('HTTP/2 on the TLS data plane', () => {
  let dir: string;
  let ca: TestCa;
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  let base: string;
  let port: number;
  let current: ClientHttp2Session | undefined;
  /** The test's h2 session; a new one once svc closed the last (it closes one idle for limits.keep_alive_timeout). */
  const session = async (): Promise<ClientHttp2Session> => {
    if (current === undefined || current.closed || current.destroyed) current = await h2Session(base, ca.pem);
    return current;
  };

  const originCount = (path: string): number => origin.requests.filter((request) => request.url === path).length;
  const rejected = async (reason: string): Promise<number> => {
    const metrics = parseExposition((await httpsGet(`${svc.adminUrl}/metrics`, { ca: ca.pem })).body);
    const value = valueOf(metrics, 'svc_http_requests_rejected_total', 'svc_http_requests_rejected_total', { listener: 'data', reason });
    return Number.isNaN(value) ? 0 : value;
  };
  /** Waits until the count of `reason` is `before + added`, and fails if it goes past it. */
  const counted = async (reason: string, before: number, added: number): Promise<void> => {
    const now = await eventually(`${added} more ${reason}`, () => rejected(reason), (value) => value >= before + added);
    assert.equal(now, before + added, `${reason}: each refusal counted once`);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-h2-'));
    ca = await makeTestCa(dir);
    const local = await issueCertificate(ca, 'localhost', { dnsNames: ['localhost'], ips: ['127.0.0.1'], days: 30 });
    origin = await startTestOrigin((request): OriginReply | Promise<OriginReply> => {
      const url = request.url ?? '/';
      if (url.startsWith('/vary')) {
        const language = request.headers['accept-language'] ?? 'none';
        return { headers: { 'cache-control': 'max-age=60', vary: 'accept-language' }, body: `in ${language}` };
      }
      if (url === '/echo' && request.method === 'POST') {
        return new Promise((resolve) => {
          const chunks: Buffer[] = [];
          request.on('data', (chunk: Buffer) => chunks.push(chunk));
          request.on('end', () => resolve({ headers: { 'cache-control': 'no-store' }, body: `got ${Buffer.concat(chunks).toString()}` }));
        });
      }
      return { headers: { 'cache-control': 'max-age=60', etag: `"${url}"` }, body: `body of ${url}` };
    });
    svc = await startSvc([origin.url], {
      config: {
        tls: { certificates: [{ cert: local.certFile, key: local.keyFile }] },
        admin: { listen: '127.0.0.1:0', tls: { certificates: [{ cert: local.certFile, key: local.keyFile }] } },
      },
    });
    port = Number(new URL(svc.dataUrl).port);
    base = `https://localhost:${port}`;
  });

  after(async () => {
    current?.close();
    await svc?.stop();
    await origin?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the data plane offers h2 first, http/1.1 beside it; the admin API http/1.1 only', async () => {
    const pick = async (listenerPort: number, offered: string[]): Promise<string | false | null> => {
      const socket = connectTls({ host: '127.0.0.1', port: listenerPort, ca: ca.pem, servername: 'localhost', ALPNProtocols: offered });
      await once(socket, 'secureConnect');
      const chosen = socket.alpnProtocol;
      socket.destroy();
      return chosen;
    };
    assert.equal(await pick(port, ['h2', 'http/1.1']), 'h2');
    assert.equal(await pick(port, ['http/1.1', 'h2']), 'h2', "the server's preference decides");
    assert.equal(await pick(port, ['http/1.1']), 'http/1.1');
    assert.equal(await pick(Number(new URL(svc.adminUrl).port), ['h2', 'http/1.1']), 'http/1.1');
  });

  test('a MISS then a HIT for each of several keys, whichever thread is their home; the origin asked once each', async () => {
    // Enough keys that some have their home on another thread than the one this session landed on.
    const paths = Array.from({ length: 8 }, (_, index) => `/many/${index}`);
    for (const path of paths) {
      const first = await h2Request(await session(), path);
      const second = await h2Request(await session(), path);
      assert.deepEqual([first.status, first.headers['x-cache'], first.body], [200, 'MISS', `body of ${path}`], path);
      assert.deepEqual([second.status, second.headers['x-cache'], second.body], [200, 'HIT', `body of ${path}`], path);
      assert.match(String(second.headers.age), /^\d+$/);
      assert.equal(second.headers.etag, `"${path}"`);
      assert.equal(second.headers['content-length'], String(`body of ${path}`.length));
      assert.equal(second.headers.connection, undefined);
      assert.equal(originCount(path), 1, path);
    }
  });

  test('HEAD is answered from the entry GET stored, without a body', async () => {
    await h2Request(await session(), '/head');
    const head = await h2Request(await session(), '/head', { ':method': 'HEAD' });
    assert.deepEqual([head.status, head.headers['x-cache'], head.body, head.headers['content-length']], [200, 'HIT', '', String('body of /head'.length)]);
    assert.equal(originCount('/head'), 1);
  });

  test('a conditional request that matches the stored ETag is answered 304 from the cache', async () => {
    await h2Request(await session(), '/conditional');
    const answer = await h2Request(await session(), '/conditional', { 'if-none-match': '"/conditional"' });
    assert.deepEqual([answer.status, answer.headers['x-cache'], answer.body], [304, 'HIT', '']);
    assert.equal(originCount('/conditional'), 1);
  });

  test('Vary keeps a variant per Accept-Language, over h2 as over HTTP/1.1', async () => {
    const en = await h2Request(await session(), '/vary', { 'accept-language': 'en' });
    const fr = await h2Request(await session(), '/vary', { 'accept-language': 'fr' });
    const enAgain = await h2Request(await session(), '/vary', { 'accept-language': 'en' });
    const frOverH1 = await httpsGet(`${base}/vary`, { ca: ca.pem, servername: 'localhost', headers: { 'accept-language': 'fr' } });
    assert.deepEqual([en.body, en.headers['x-cache'], fr.body, fr.headers['x-cache'], enAgain.headers['x-cache']], ['in en', 'MISS', 'in fr', 'MISS', 'HIT']);
    assert.deepEqual([frOverH1.body, frOverH1.headers['x-cache']], ['in fr', 'HIT']);
    assert.equal(originCount('/vary'), 2);
  });

  test('h1 and h2 clients share one entry: an HTTP/1.1 MISS, then an h2 HIT', async () => {
    const h1 = await httpsGet(`${base}/shared`, { ca: ca.pem, servername: 'localhost' });
    const h2 = await h2Request(await session(), '/shared');
    assert.deepEqual([h1.status, h1.headers['x-cache'], h2.status, h2.headers['x-cache'], h2.body], [200, 'MISS', 200, 'HIT', h1.body]);
    assert.equal(originCount('/shared'), 1);
  });

  test('a request body over h2 reaches the origin, with Host from :authority and no pseudo-header', async () => {
    const answer = await h2Request(await session(), '/echo', { ':method': 'POST' }, 'payload');
    assert.deepEqual([answer.status, answer.body, answer.headers['x-cache']], [200, 'got payload', 'BYPASS']);
    const seen = origin.requests.find((request) => request.url === '/echo')!;
    assert.equal(seen.headers.host, `localhost:${port}`);
    assert.equal(Object.keys(seen.headers).some((name) => name.startsWith(':')), false);
  });

  test('a Host that names another authority than :authority is refused 400; the same one is not', async () => {
    const before = await rejected('authority_mismatch');
    const raw = await RawH2Connection.open(port, ca.pem);
    raw.send(headersFrame(1, [...requestFields('GET', '/elsewhere', `localhost:${port}`), ['host', 'other.test']]));
    raw.send(headersFrame(3, [...requestFields('GET', '/many/1', `localhost:${port}`), ['host', `LOCALHOST:${port}`]]));
    const statusOf = async (streamId: number): Promise<string> => {
      const head = await eventually(`the head of stream ${streamId}`, () => raw.frames.find((f) => f.type === FrameType.HEADERS && f.streamId === streamId), Boolean);
      // The first field of svc's answer is :status, HPACK-indexed (RFC 7541 Appendix A: 8 is 200, 12 is 400).
      return { 0x88: '200', 0x8c: '400' }[head!.payload[0]!] ?? `index ${head!.payload[0]}`;
    };
    assert.deepEqual([await statusOf(1), await statusOf(3)], ['400', '200']);
    raw.close();
    await counted('authority_mismatch', before, 1);
  });

  test('the access log says HTTP/2.0 and tls_alpn h2', async () => {
    // Every answer but a 200 is logged (a 200 one in a hundred).
    assert.equal((await h2Request(await session(), '/logged', { 'if-none-match': '"/logged"' })).status, 200);
    assert.equal((await h2Request(await session(), '/logged', { 'if-none-match': '"/logged"' })).status, 304);
    const line = await svc.logs.find('the access record of /logged', (entry) => entry.msg === 'access' && entry.path === '/logged' && entry.status === 304);
    assert.equal(line.proto, 'HTTP/2.0');
    assert.equal(line.tls_alpn, 'h2');
    assert.equal(line.host, `localhost:${port}`);
    assert.match(String(line.remote), /^127\.0\.0\.1:\d+$/);
  });

  test('200 concurrent streams on one session are all answered', async () => {
    const client = await session();
    await h2Request(client, '/concurrent');
    const answers = await Promise.all(Array.from({ length: 200 }, (_, index) => h2Request(client, index % 10 === 0 ? `/concurrent/${index}` : '/concurrent')));
    assert.equal(answers.filter((answer) => answer.status === 200).length, 200);
    assert.equal(originCount('/concurrent'), 1);
  });

  test('connection-specific fields and TE other than trailers are malformed: each stream reset and counted', async () => {
    const malformed: [string, string][] = [
      ['connection', 'keep-alive'],
      ['keep-alive', 'timeout=5'],
      ['proxy-connection', 'keep-alive'],
      ['transfer-encoding', 'chunked'],
      ['upgrade', 'websocket'],
      ['te', 'gzip'],
    ];
    const before = await rejected('h2_malformed');
    const raw = await RawH2Connection.open(port, ca.pem);
    malformed.forEach((field, index) => raw.send(headersFrame(1 + 2 * index, [...requestFields('GET', '/malformed', 'localhost'), field])));
    // A well-formed stream after them is answered: the session goes on.
    const good = 1 + 2 * malformed.length;
    raw.send(headersFrame(good, [...requestFields('GET', '/malformed-ok', 'localhost'), ['te', 'trailers']]));
    await eventually('the answer to the good stream', () => raw.frames.some((f) => f.type === FrameType.HEADERS && f.streamId === good), Boolean);
    const resets = raw.framesOf(FrameType.RST_STREAM);
    assert.deepEqual(
      resets.map((f) => [f.streamId, errorCodeOf(f)]),
      malformed.map((_, index) => [1 + 2 * index, ErrorCode.PROTOCOL_ERROR]),
    );
    raw.close();
    await counted('h2_malformed', before, malformed.length);
  });

  test('a Content-Length that disagrees with the DATA frames is refused and counted', async () => {
    const post = (length: string): [string, string][] => [...requestFields('POST', '/echo', 'localhost'), ['content-length', length]];
    const malformedBefore = await rejected('h2_malformed');
    const protocolBefore = await rejected('h2_protocol_error');
    // Fewer bytes than announced: the stream is reset.
    const short = await RawH2Connection.open(port, ca.pem);
    short.send(headersFrame(1, post('10'), { endStream: false }), dataFrame(1, 'abc'));
    await eventually('the reset of the short body', () => short.framesOf(FrameType.RST_STREAM).map(errorCodeOf), (codes) => codes.includes(ErrorCode.PROTOCOL_ERROR));
    short.close();
    await counted('h2_malformed', malformedBefore, 1);
    // More bytes than announced: nghttp2 ends the session.
    const long = await RawH2Connection.open(port, ca.pem);
    long.send(headersFrame(1, post('2'), { endStream: false }), dataFrame(1, 'abcdef'));
    await long.whenClosed();
    await counted('h2_protocol_error', protocolBefore, 1);
  });

  test('a header list over limits.max_header_bytes or limits.max_header_fields is refused and counted', async () => {
    const before = await rejected('h2_malformed');
    const raw = await RawH2Connection.open(port, ca.pem);
    // Node applies its SETTINGS once the client acknowledged them: the client's first answer is waited for.
    await eventually('the settings exchanged', () => raw.framesOf(FrameType.SETTINGS).length, (count) => count >= 2);
    raw.send(headersFrames(1, [...requestFields('GET', '/big', 'localhost'), ['x-big', 'a'.repeat(20_000)]]));
    const fields = Array.from({ length: 150 }, (_, index): [string, string] => [`x-field-${index}`, 'v']);
    raw.send(headersFrames(3, [...requestFields('GET', '/many-fields', 'localhost'), ...fields]));
    raw.send(headersFrames(5, requestFields('GET', '/many/2', 'localhost')));
    await eventually('the answer to the stream after them', () => raw.frames.some((f) => f.type === FrameType.HEADERS && f.streamId === 5), Boolean);
    assert.deepEqual(
      raw.framesOf(FrameType.RST_STREAM).map((f) => [f.streamId, errorCodeOf(f)]),
      [
        [1, ErrorCode.ENHANCE_YOUR_CALM],
        [3, ErrorCode.ENHANCE_YOUR_CALM],
      ],
    );
    assert.equal(originCount('/big') + originCount('/many-fields'), 0);
    raw.close();
    await counted('h2_malformed', before, 2);
  });

  test('rapid reset: a session that resets stream after stream gets GOAWAY ENHANCE_YOUR_CALM, and the node serves on', async () => {
    await h2Request(await session(), '/reset');
    const before = await rejected('rapid_reset');
    const requestsBefore = originCount('/reset');
    const raw = await RawH2Connection.open(port, ca.pem);
    const sent = 5_000;
    let written = 0;
    for (let id = 1; written < sent && raw.send(headersFrame(id, requestFields('GET', '/reset', `localhost:${port}`)), rstStreamFrame(id)); id += 2) written++;
    await raw.whenClosed();
    const goaway = raw.framesOf(FrameType.GOAWAY).map(errorCodeOf);
    assert.ok(goaway.includes(ErrorCode.ENHANCE_YOUR_CALM), `GOAWAY codes: ${goaway.join(', ')}`);
    // The session was cut long before the streams it sent could be answered: its work is bounded.
    const answered = raw.framesOf(FrameType.HEADERS).length;
    assert.ok(answered < sent / 2, `${answered} of ${sent} streams answered before the session was closed`);
    await counted('rapid_reset', before, 1);
    assert.equal(originCount('/reset'), requestsBefore, 'the reset streams were hits: nothing reached the origin');
    const after = await h2Session(base, ca.pem);
    assert.equal((await h2Request(after, '/reset')).headers['x-cache'], 'HIT');
    after.close();
  });

  test('a CONTINUATION flood is cut: the session is closed, counted, and the node serves on', async () => {
    const before = await rejected('h2_protocol_error');
    const raw = await RawH2Connection.open(port, ca.pem);
    raw.send(headersFrame(1, requestFields('GET', '/flood', 'localhost'), { endHeaders: false }));
    const block = headerBlock([['x-flood', 'a'.repeat(1000)]]);
    let frames = 0;
    while (frames < 10_000 && raw.send(continuationFrame(1, block))) {
      frames++;
      // Let the server read and answer between bursts, as a real flood over a network would.
      if (frames % 100 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await raw.whenClosed();
    assert.ok(frames < 10_000, `the server closed the connection after ${frames} CONTINUATION frames`);
    assert.equal(raw.frames.some((f) => f.type === FrameType.HEADERS), false, 'no request was made of the endless header block');
    await counted('h2_protocol_error', before, 1);
    assert.equal((await h2Request(await session(), '/many/0')).headers['x-cache'], 'HIT');
    assert.equal((await httpsGet(`${base}/many/0`, { ca: ca.pem, servername: 'localhost' })).headers['x-cache'], 'HIT');
  });
});
