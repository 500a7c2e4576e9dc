// Issue 29 item 1, the door on its own: request heads measured in bytes exactly as they came, field
// lines counted, request lines and transfer codings judged, and bodies skipped by their framing so
// that the next head is found wherever the bytes are cut.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RequestHeadMeter, type HeadLimits } from '../../src/edge/request-head-meter.js';
import { judgeRequestLine } from '../../src/edge/request-line.js';

const LIMITS: HeadLimits = { maxHeaderBytes: 16_384, maxHeaderFields: 100 };

/** Reads `bytes` in the given pieces; the heads let through and the refusal, if any. */
function meter(bytes: string | string[], limits: HeadLimits = LIMITS) {
  const door = new RequestHeadMeter(limits);
  let refusal;
  for (const piece of typeof bytes === 'string' ? [bytes] : bytes) {
    refusal ??= door.read(Buffer.from(piece, 'latin1'));
  }
  const admitted = [];
  for (let head = door.nextAdmitted(); head !== undefined; head = door.nextAdmitted()) admitted.push(`${head.method} ${head.target}`);
  return { admitted, refusal };
}

/** A GET head of exactly `bytes` bytes, padded in one field's value. */
function headOfBytes(bytes: number): string {
  const bare = 'GET /x HTTP/1.1\r\nHost: shop.test\r\nX-Pad: \r\n\r\n';
  return `GET /x HTTP/1.1\r\nHost: shop.test\r\nX-Pad: ${'p'.repeat(bytes - bare.length)}\r\n\r\n`;
}

describe('request line (RFC 9112 §3)', () => {
  test('one space between three parts, HTTP/1.0 or 1.1', () => {
    assert.deepEqual(judgeRequestLine('GET /a?b HTTP/1.1'), { ok: true, method: 'GET', target: '/a?b', version: '1.1' });
    assert.deepEqual(judgeRequestLine('POST http://a/b HTTP/1.0'), { ok: true, method: 'POST', target: 'http://a/b', version: '1.0' });
  });
  for (const version of ['HTTP/2.0', 'HTTP/1.2', 'HTTP/0.9', 'HTTP/3.0', 'HTTP/9.9']) {
    test(`${version}: 505`, () => assert.deepEqual(judgeRequestLine(`GET / ${version}`), { ok: false, status: 505, reason: 'version_not_supported', method: 'GET', target: '/' }));
  }
  for (const line of ['GET /x', 'GET  / HTTP/1.1', 'GET /  HTTP/1.1', ' GET / HTTP/1.1', 'GET / HTTP/1.1 ', 'GET /a b HTTP/1.1', 'GET', 'GET / http/1.1', 'GET / HTTP/1.10', 'GET / HTTP/2', 'GET\t/ HTTP/1.1', '']) {
    test(`${JSON.stringify(line)}: 400`, () => {
      const verdict = judgeRequestLine(line);
      assert.equal(verdict.ok, false);
      assert.equal(!verdict.ok && verdict.status, 400);
      assert.equal(!verdict.ok && verdict.reason, 'invalid_request_line');
    });
  }
});

describe('head size and field count, exactly as received', () => {
  test('a head of exactly max_header_bytes passes; one byte more is 431', () => {
    assert.equal(headOfBytes(16_384).length, 16_384);
    assert.deepEqual(meter(headOfBytes(16_384)).admitted, ['GET /x']);
    assert.deepEqual(meter(headOfBytes(16_385)).refusal, { status: 431, reason: 'header_too_large', method: 'GET', target: '/x', startsAt: 0 });
  });

  test('whitespace around values and line ends count, which Node\'s maxHeaderSize leaves out', () => {
    const padded = `GET /x HTTP/1.1\r\nHost: shop.test\r\nX-Pad:${' '.repeat(16_384)}v\r\n\r\n`;
    assert.equal(meter(padded).refusal?.reason, 'header_too_large');
  });

  test('refused as soon as the limit is passed, before the head ends', () => {
    const door = new RequestHeadMeter({ maxHeaderBytes: 1024, maxHeaderFields: 100 });
    assert.equal(door.read(Buffer.from('GET /x HTTP/1.1\r\nX-Pad: ')), undefined);
    assert.deepEqual(door.read(Buffer.from('p'.repeat(2_000))), { status: 431, reason: 'header_too_large', method: 'GET', target: '/x', startsAt: 0 });
    assert.equal(door.read(Buffer.from('\r\n\r\n')), undefined, 'and nothing is read after it');
  });

  test('CRLFs before a request line are skipped, as the parser does, and not counted', () => {
    assert.deepEqual(meter(`\r\n\r\n${headOfBytes(16_384)}`).admitted, ['GET /x']);
  });

  test('1,990 short fields are 431 (Node counts them as 14 KB); exactly the cap passes', () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `X-F${i}: v\r\n`).join('');
    assert.deepEqual(meter(`GET /x HTTP/1.1\r\nHost: a\r\n${fields(1_989)}\r\n`).refusal, { status: 431, reason: 'too_many_header_fields', method: 'GET', target: '/x', startsAt: 0 });
    assert.deepEqual(meter(`GET /x HTTP/1.1\r\nHost: a\r\n${fields(99)}\r\n`).admitted, ['GET /x']);
    assert.equal(meter(`GET /x HTTP/1.1\r\nHost: a\r\n${fields(100)}\r\n`).refusal?.reason, 'too_many_header_fields');
  });
});

describe('transfer codings (RFC 9112 §6.1)', () => {
  const post = (coding: string) => `POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ${coding}\r\n\r\n0\r\n\r\n`;
  for (const coding of ['gzip, chunked', 'x, chunked', 'identity, chunked', 'GZIP ,chunked']) {
    test(`${coding}: 501`, () => assert.deepEqual(meter(post(coding)).refusal, { status: 501, reason: 'unsupported_transfer_coding', method: 'POST', target: '/p', startsAt: 0 }));
  }
  test('two field lines add up: gzip, then chunked, is 501', () => {
    assert.equal(meter('POST /p HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n').refusal?.reason, 'unsupported_transfer_coding');
  });
  test('chunked alone (any case, empty list elements ignored) is read', () => {
    for (const coding of ['chunked', 'CHUNKED', ', chunked']) assert.deepEqual(meter(post(coding)), { admitted: ['POST /p'], refusal: undefined }, coding);
  });
  test('framing the parser refuses (chunked not last, twice, with Content-Length) is left to it: nothing let through, nothing refused', () => {
    for (const fields of ['Transfer-Encoding: chunked, gzip', 'Transfer-Encoding: chunked, chunked', 'Transfer-Encoding: chunked\r\nContent-Length: 5', 'Content-Length: 1\r\nContent-Length: 1', 'Content-Length: +1']) {
      assert.deepEqual(meter(`POST /p HTTP/1.1\r\n${fields}\r\n\r\n0\r\n\r\nGET /next HTTP/1.1\r\n\r\n`), { admitted: [], refusal: undefined }, fields);
    }
  });
});

describe('bodies are skipped by their framing: the next head is found where the parser finds it', () => {
  interface Message {
    bytes: string;
    /** `method target` of the head. */
    head: string;
  }
  const target = fc.stringMatching(/^\/[a-z0-9]{0,8}$/);
  const body = fc.string({ unit: fc.constantFrom('a', '\r', '\n', '0', ';', ' ', 'G', 'T', '/'), maxLength: 40 });
  const message: fc.Arbitrary<Message> = fc.oneof(
    target.map((path) => ({ bytes: `GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`, head: `GET ${path}` })),
    fc.tuple(target, body).map(([path, content]) => ({
      bytes: `POST ${path} HTTP/1.1\r\nHost: a\r\nContent-Length:  ${content.length} \r\n\r\n${content}`,
      head: `POST ${path}`,
    })),
    fc.tuple(target, fc.array(body, { maxLength: 4 }), fc.boolean(), fc.boolean()).map(([path, chunks, extension, trailer]) => ({
      bytes:
        `PUT ${path} HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n` +
        chunks.filter((c) => c.length > 0).map((c) => `${c.length.toString(16).toUpperCase().padStart(3, '0')}${extension ? ';a="b c"' : ''}\r\n${c}\r\n`).join('') +
        `0\r\n${trailer ? 'X-T: 1\r\n' : ''}\r\n`,
      head: `PUT ${path}`,
    })),
    target.map((path) => ({ bytes: `\r\nGET ${path} HTTP/1.0\r\nConnection: keep-alive\r\n\r\n`, head: `GET ${path}` })),
  );

  test('property: any run of messages, cut anywhere, gives each head once and in order', () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), (messages, cuts) => {
        const all = messages.map((m) => m.bytes).join('');
        const points = [...new Set(cuts.map((cut) => cut % (all.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...points, all.length].slice(1).map((end, i, ends) => all.slice(i === 0 ? 0 : ends[i - 1], end));
        assert.deepEqual(meter(pieces), { admitted: messages.map((m) => m.head), refusal: undefined });
      }),
      { numRuns: 2_000 },
    );
  });

  test('nothing is read after a message that closes the connection', () => {
    assert.deepEqual(meter('GET /a HTTP/1.1\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\n\r\n').admitted, ['GET /a']);
    assert.deepEqual(meter('GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.1\r\n\r\n').admitted, ['GET /a']);
  });

  test('after an upgrade svc does not take, the rest of those bytes is skipped as Node\'s parser skips it; the next bytes are read', () => {
    const upgrade = 'GET /a HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n';
    assert.deepEqual(meter([`${upgrade}GET /b HTTP/1.1\r\n\r\n`, 'GET /c HTTP/1.1\r\n\r\n']).admitted, ['GET /a', 'GET /c']);
  });

  test('CONNECT is the connect listener\'s: nothing is let through or read after it', () => {
    assert.deepEqual(meter('CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\nGET /b HTTP/1.1\r\n\r\n'), { admitted: [], refusal: undefined });
  });

  test('a bare LF is left to the parser, which refuses it as framing: in a head, after chunk data, in trailers', () => {
    assert.deepEqual(meter('GET / HTTP/1.1\nHost: a\n\nGET /x HTTP/2.0\r\n\r\n'), { admitted: [], refusal: undefined });
    const chunked = 'POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n';
    assert.deepEqual(meter(`${chunked}1\r\naXY0\r\n\r\nGET /x HTTP/2.0\r\n\r\n`), { admitted: ['POST /p'], refusal: undefined });
    assert.deepEqual(meter(`${chunked}0\r\nX-T: 1\n\r\nGET /x HTTP/2.0\r\n\r\n`), { admitted: ['POST /p'], refusal: undefined });
  });

  test('a refusal says where its head begins in the bytes just read, so that a parse error before it is answered instead', () => {
    const door = new RequestHeadMeter(LIMITS);
    const first = 'GET /a HTTP/1.1\r\n\r\n';
    assert.equal(door.read(Buffer.from(`${first}GET /b HTTP/2.0\r\n\r\n`))?.startsAt, first.length);
    const across = new RequestHeadMeter(LIMITS);
    assert.equal(across.read(Buffer.from('GET /b HT')), undefined);
    assert.equal(across.read(Buffer.from('TP/2.0\r\n\r\n'))?.startsAt, 0);
  });
});
