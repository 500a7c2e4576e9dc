// Bodies whose end only the connection tells (issue 14 item 9, docs/http-caching.md "Truncated and
// close-delimited bodies"): a close-delimited body (no Content-Length, not chunked) is stored only
// when the origin closed cleanly and the body is not empty; a body cut by a reset, or one that ends
// before its Content-Length, is never stored. The origin is a raw TCP server so that each answer's
// framing and ending is exactly what the test writes.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fetchRaw, header } from '../support/http.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';

const BODY = 'close-delimited body '.repeat(500);

/** How the origin answers a path: the head it writes, what of the body, and how it ends the connection. */
interface RawAnswer {
  head: string;
  body: string;
  end: 'fin' | 'reset';
}

const ANSWERS: Record<string, RawAnswer> = {
  '/clean': { head: 'HTTP/1.1 200 OK\r\ncache-control: max-age=600\r\nconnection: close', body: BODY, end: 'fin' },
  '/reset': { head: 'HTTP/1.1 200 OK\r\ncache-control: max-age=600\r\nconnection: close', body: BODY.slice(0, 4000), end: 'reset' },
  '/empty': { head: 'HTTP/1.1 200 OK\r\ncache-control: max-age=600\r\nconnection: close', body: '', end: 'fin' },
  '/short': { head: `HTTP/1.1 200 OK\r\ncache-control: max-age=600\r\ncontent-length: ${BODY.length}`, body: BODY.slice(0, 4000), end: 'fin' },
  '/short-reset': { head: `HTTP/1.1 200 OK\r\ncache-control: max-age=600\r\ncontent-length: ${BODY.length}`, body: BODY.slice(0, 4000), end: 'reset' },
};

describe('truncated and close-delimited bodies through svc', { timeout: 60_000 }, () => {
  let origin: Server;
  let svc: SvcUnderTest;
  const requests: string[] = [];
  before(async () => {
    origin = createServer((socket: Socket) => {
      let request = '';
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        request += chunk.toString('latin1');
        if (!request.includes('\r\n\r\n')) return;
        const path = request.split(' ')[1] ?? '/';
        requests.push(path);
        const answer = ANSWERS[path];
        if (answer === undefined) return void socket.destroy();
        socket.write(`${answer.head}\r\n\r\n${answer.body}`, () => {
          if (answer.end === 'fin') socket.end();
          // An origin that dies mid-body: the reset comes after the bytes were read (a reset sent on
          // the heels of its data may reach a loopback reader as a plain end, which nobody can tell).
          // A sleep, not a wait: svc shows nothing of having read the bytes that a test could wait on.
          else setTimeout(() => socket.resetAndDestroy(), 50);
        });
      });
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    svc = await startSvc([`http://127.0.0.1:${(origin.address() as AddressInfo).port}`]);
  });
  after(async () => {
    await svc.stop();
    await new Promise<void>((resolve) => origin.close(() => resolve()));
  });

  const get = (path: string) =>
    fetchRaw(`${svc.dataUrl}${path}`).then(
      (answer) => answer,
      () => undefined,
    );
  const originRequests = (path: string): number => requests.filter((seen) => seen === path).length;

  test('a close-delimited body that ends with a clean close is stored, with its length', async () => {
    const first = await get('/clean');
    assert.equal(first?.body, BODY);
    const second = await get('/clean');
    assert.equal(second && header(second, 'x-cache'), 'HIT');
    assert.equal(second?.body, BODY);
    assert.equal(second && header(second, 'content-length'), String(BODY.length));
    assert.equal(originRequests('/clean'), 1);
  });

  test('a close-delimited body cut by a reset is never stored', async () => {
    const first = await get('/reset');
    assert.notEqual(first?.body, BODY, 'the client does not get a whole body');
    const second = await get('/reset');
    assert.notEqual(second && header(second, 'x-cache'), 'HIT');
    assert.equal(originRequests('/reset'), 2);
  });

  test('an empty close-delimited body reaches its client but is not stored', async () => {
    const first = await get('/empty');
    assert.equal(first?.status, 200);
    assert.equal(first?.body, '');
    const second = await get('/empty');
    assert.equal(second && header(second, 'x-cache'), 'MISS');
    assert.equal(originRequests('/empty'), 2);
  });

  for (const path of ['/short', '/short-reset']) {
    test(`a body that ends before its Content-Length (${path === '/short' ? 'clean close' : 'reset'}) is never stored`, async () => {
      const first = await get(path);
      assert.notEqual(first?.body, BODY);
      const second = await get(path);
      assert.notEqual(second && header(second, 'x-cache'), 'HIT');
      assert.equal(originRequests(path), 2);
    });
  }
});
