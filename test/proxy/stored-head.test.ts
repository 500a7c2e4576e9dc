// The head of a stored response, read off the wire: the stored fields as the miss sent them, in the
// origin's order, then Age and X-Cache, whether svc writes them through Node's header slot (fields
// validated once, runs of them packed) or the plain way (a list whose packed runs would share a
// name). And a stored list that is not valid HTTP is refused on every hit, as writeHead would.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { outgoingHeaderSlot } from '../../src/proxy/outgoing-header-slot.js';
import { nodeInternalsAllowed } from '../../src/runtime/node-internals.js';
import { storedSlotFields, writeStoredHead } from '../../src/proxy/stored-head.js';

/** The head lines of one GET answered on a fresh connection, status line first, as sent. */
async function headLines(url: string, extraLines = ''): Promise<string[]> {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${extraLines}\r\n`);
  let received = '';
  for await (const chunk of socket) {
    received += (chunk as Buffer).toString('latin1');
    if (received.includes('\r\n\r\n')) break;
  }
  socket.destroy();
  return received.slice(0, received.indexOf('\r\n\r\n')).split('\r\n');
}

/** The head lines without the ones that change from one answer to the next. */
function stableLines(lines: string[]): string[] {
  return lines.filter((line) => !/^(age|x-cache|date):/i.test(line));
}

test('this Node writes a response through its header slot as the probe expects', () => {
  // If this fails, a Node release changed how a response's header fields are kept: hits still work
  // (the plain path), but each one validates its stored fields again; see outgoing-header-slot.ts.
  // With SVC_NODE_INTERNALS=off (test/run.ts runs this file both ways) the slot must stay unused.
  assert.equal(outgoingHeaderSlot?.description, nodeInternalsAllowed() ? 'kOutHeaders' : undefined);
});

describe('the slot form of a stored list', { skip: nodeInternalsAllowed() ? false : 'no slot form with SVC_NODE_INTERNALS=off' }, () => {
  test('gives each framing field an entry and joins each run of other fields into one', () => {
    const stored = ['Content-Type', 'text/plain', 'content-length', '5', 'cache-control', 'max-age=60', 'ETag', '"x"', 'date', 'D', 'via', '1.1 svc', 'Via', '1.1 edge'];
    assert.deepEqual(Object.entries(storedSlotFields(stored, '3', 'HIT') ?? {}), [
      ['content-type', ['Content-Type', 'text/plain']],
      ['content-length', ['content-length', '5']],
      ['cache-control', ['cache-control', 'max-age=60\r\nETag: "x"']],
      ['date', ['date', 'D']],
      ['via', ['via', '1.1 svc\r\nVia: 1.1 edge\r\nage: 3\r\nx-cache: HIT']],
    ]);
  });

  test('starts Age an entry of its own after a framing field', () => {
    assert.deepEqual(Object.entries(storedSlotFields(['cache-control', 'max-age=60', 'content-length', '5'], '0', 'STALE') ?? {}), [
      ['cache-control', ['cache-control', 'max-age=60']],
      ['content-length', ['content-length', '5']],
      ['age', ['age', '0\r\nx-cache: STALE']],
    ]);
  });

  test('is refused when two entries would share a name, so the plain path writes the list', () => {
    assert.equal(storedSlotFields(['link', '</a>', 'content-length', '1', 'link', '</b>'], '0', 'HIT'), null);
    assert.equal(storedSlotFields(['date', 'D', 'etag', '"x"', 'Date', 'E'], '0', 'HIT'), null);
  });
});

describe('the head of a hit', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;

  before(async () => {
    origin = await startTestOrigin();
    // Exact Age values below: a real second passing between two hits must not move them.
    svc = await startSvc([origin.url], { frozenClock: true });
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('carries the stored fields as the miss did, in the origin order, then Age and X-Cache', async () => {
    origin.handle(() => ({
      // Date among the other fields, where svc must still hand it to Node as a field of its own.
      headers: { 'Cache-Control': 'max-age=60', 'X-Origin': 'Exact  Value', Date: new Date().toUTCString(), ETag: '"v1"', 'content-type': 'text/plain' },
      body: 'hello',
    }));
    const miss = await headLines(`${svc.dataUrl}/head-order`);
    const hit = await headLines(`${svc.dataUrl}/head-order`);
    assert.ok(miss.includes('x-cache: MISS'), miss.join('\n'));
    assert.ok(hit.includes('x-cache: HIT'), hit.join('\n'));
    assert.deepEqual(stableLines(hit), stableLines(miss));
    const names = hit.slice(1).map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
    assert.deepEqual(names.slice(0, 5), ['cache-control', 'x-origin', 'date', 'etag', 'content-type']);
    assert.ok(hit.some((line) => line.toLowerCase() === 'x-origin: exact  value'), hit.join('\n'));
    assert.ok(names.indexOf('age') > names.indexOf('via'), 'Age comes after the stored fields');
    // Framed by the stored fields as Node sees them: the stored length, the stored Date only.
    assert.equal(names.filter((name) => name === 'date').length, 1);
    assert.ok(names.includes('content-length') && !names.includes('transfer-encoding'), hit.join('\n'));
    assert.equal(names.indexOf('x-cache'), names.indexOf('age') + 1);
  });

  test('gives each hit the Age and X-Cache of its own moment', async () => {
    // Hits in the same second share one copy of the head's fields; one a second later, or with
    // another X-Cache, must not be given the copy made before it.
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=10', 'content-type': 'text/plain' }, body: 'aging' }));
    const answer = async (extra = ''): Promise<string> => {
      const lines = await headLines(`${svc.dataUrl}/aging`, extra);
      return lines.filter((line) => /^(age|x-cache):/.test(line)).join(' ');
    };
    await answer();
    assert.equal(await answer(), 'age: 0 x-cache: HIT');
    assert.equal(await answer(), 'age: 0 x-cache: HIT');
    svc.clock.advance(3_000);
    assert.equal(await answer(), 'age: 3 x-cache: HIT');
    svc.clock.advance(10_000);
    assert.equal(await answer('Cache-Control: max-stale=60\r\n'), 'age: 13 x-cache: STALE');
    assert.equal(await answer('Cache-Control: max-stale=60\r\n'), 'age: 13 x-cache: STALE');
    svc.clock.advance(1_000);
    assert.equal(await answer('Cache-Control: max-stale=60\r\n'), 'age: 14 x-cache: STALE');
  });

  test('keeps repeated fields in their order, between the others', async () => {
    origin.handle(() => ({
      headers: { 'cache-control': 'max-age=60', link: ['</a>; rel=preload', '</b>; rel=preload'], 'x-between': 'yes' },
      body: 'links',
    }));
    const miss = await headLines(`${svc.dataUrl}/repeated`);
    const hit = await headLines(`${svc.dataUrl}/repeated`);
    assert.ok(hit.includes('x-cache: HIT'), hit.join('\n'));
    assert.deepEqual(stableLines(hit), stableLines(miss));
    assert.equal(hit.filter((line) => line.startsWith('link: ')).join(' | '), 'link: </a>; rel=preload | link: </b>; rel=preload');
  });

  test('keeps an origin X-Cache beside svc own', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=60', 'X-Cache': 'HIT from upstream-cdn' }, body: 'layered' }));
    await headLines(`${svc.dataUrl}/layered`);
    const hit = await headLines(`${svc.dataUrl}/layered`);
    assert.deepEqual(
      hit.filter((line) => /^x-cache:/i.test(line)).map((line) => line.toLowerCase()),
      ['x-cache: hit from upstream-cdn', 'x-cache: hit'],
    );
  });
});

describe('stored field lists written straight through writeStoredHead', () => {
  let server: Server;
  let url: string;
  /** The list the next request is answered from. */
  let stored: string[] = [];

  before(async () => {
    server = createServer((_request, response) => {
      try {
        writeStoredHead(response, 200, stored, '0', 'HIT');
        response.end('ok');
      } catch (error) {
        response.writeHead(500, { 'x-refused': (error as { code?: string }).code ?? 'unknown' });
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a list that is not valid HTTP is refused on every hit, not only the first', async () => {
    stored = ['content-length', '2', 'x-broken', 'line\r\ninjected: yes'];
    for (let hit = 0; hit < 2; hit++) {
      const lines = await headLines(url);
      assert.equal(lines[0], 'HTTP/1.1 500 Internal Server Error');
      assert.ok(lines.includes('x-refused: ERR_INVALID_CHAR'), lines.join('\n'));
      assert.ok(!lines.some((line) => line.startsWith('injected')));
    }
  });

  test('a list whose runs would share a name goes the plain way, in its order', async () => {
    // Date splits the two Link lines into two runs that both start with "link" (undici merges
    // repeated names, so an origin answer never stores such a list; an older record might).
    stored = ['link', '</a>', 'Date', 'Sat, 21 Nov 2026 10:00:00 GMT', 'LINK', '</b>', 'content-length', '2'];
    assert.equal(storedSlotFields(stored, '0', 'HIT'), null);
    const lines = await headLines(url);
    assert.deepEqual(lines.slice(1, 7), ['link: </a>', 'Date: Sat, 21 Nov 2026 10:00:00 GMT', 'LINK: </b>', 'content-length: 2', 'age: 0', 'x-cache: HIT']);
  });
});
