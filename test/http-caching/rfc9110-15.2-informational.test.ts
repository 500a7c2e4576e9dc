// RFC 9110 §15.2 through a real svc node: the origin's informational answers (103 Early Hints above
// all) reach the client whose request caused them, on a miss, a revalidation and a pass-through, but
// never an HTTP/1.0 client.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { OriginReply } from '../support/test-origin.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { R, requirement } from './rfc-requirements.js';
import { h2Fetch, overH2, RAW_HTTP1_SKIP, speaksH2 } from '../support/test-protocol.js';

interface Informed {
  status: number;
  informational: { statusCode: number; headers: IncomingHttpHeaders }[];
  body: string;
  xCache: string | undefined;
}

/** A request through node:http (node:http2 in the HTTP/2 pass), which reports every 1xx answer before the final one. */
async function requestWithInformational(url: string, method = 'GET', body?: string): Promise<Informed> {
  if (speaksH2(url)) {
    const answer = await h2Fetch(url, { method, body });
    return { status: answer.status, informational: answer.informational, body: answer.raw.toString('utf8'), xCache: answer.headers['x-cache'] as string | undefined };
  }
  return new Promise((resolve, reject) => {
    const informational: Informed['informational'] = [];
    const request = httpRequest(url, { method, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, informational, body: Buffer.concat(chunks).toString('utf8'), xCache: response.headers['x-cache'] as string | undefined }),
      );
    });
    request.on('information', (info) => informational.push({ statusCode: info.statusCode, headers: info.headers }));
    request.on('error', reject);
    request.end(body);
  });
}

/** The raw bytes of an HTTP/1.0 exchange: the connection closes after the answer. */
function http10Get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

const HINTS = { link: '</style.css>; rel=preload; as=style', 'x-hint': 'early' };

describe('RFC 9110 §15.2 informational answers through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  requirement(
    R.informationalForwarded,
    async () => {
      f.on('/hints/miss', { informational: [{ status: 103, headers: HINTS }], headers: { 'cache-control': 'max-age=600' }, body: 'page', delayMs: 50 });
      const answer = await requestWithInformational(`${f.svc.dataUrl}/hints/miss`);
      assert.equal(answer.status, 200);
      assert.equal(answer.body, 'page');
      assert.equal(answer.xCache, 'MISS');
      assert.deepEqual(
        answer.informational.map((info) => [info.statusCode, info.headers.link, info.headers['x-hint']]),
        [[103, HINTS.link, 'early']],
      );
    },
    '103 Early Hints on a miss, with its fields, before the 200',
  );

  requirement(
    R.informationalForwarded,
    async () => {
      const links = ['</a.css>; rel=preload; as=style', '<https://cdn.example/b,c.js>; rel=preload; as=script'];
      f.on('/hints/links', { informational: [{ status: 103, headers: { link: links } }], headers: { 'cache-control': 'max-age=600' }, body: 'page' });
      const answer = await requestWithInformational(`${f.svc.dataUrl}/hints/links`);
      assert.equal(answer.informational[0]?.statusCode, 103);
      assert.equal(answer.informational[0]?.headers.link, links.join(', '));
    },
    'every Link of a 103, a comma inside a URI included',
  );

  requirement(
    R.informationalForwarded,
    async () => {
      f.on('/hints/revalidate', (request): OriginReply =>
        request.headers['if-none-match'] === '"h"'
          ? { informational: [{ status: 103, headers: HINTS }], status: 304, headers: { etag: '"h"', 'cache-control': 'max-age=10' } }
          : { headers: { etag: '"h"', 'cache-control': 'max-age=10' }, body: 'revalidated page' },
      );
      await requestWithInformational(`${f.svc.dataUrl}/hints/revalidate`);
      f.svc.clock.advance(20_000);
      const answer = await requestWithInformational(`${f.svc.dataUrl}/hints/revalidate`);
      assert.equal(answer.xCache, 'REVALIDATED');
      assert.equal(answer.body, 'revalidated page');
      assert.deepEqual(answer.informational.map((info) => info.statusCode), [103]);
    },
    '103 before the 304 of a revalidation',
  );

  requirement(
    R.informationalForwarded,
    async () => {
      f.on('/hints/post', { informational: [{ status: 103, headers: HINTS }], status: 201, body: 'created' });
      const answer = await requestWithInformational(`${f.svc.dataUrl}/hints/post`, 'POST', '{}');
      assert.equal(answer.status, 201);
      assert.equal(answer.xCache, 'BYPASS');
      assert.deepEqual(answer.informational.map((info) => info.statusCode), [103]);
    },
    '103 on a request svc passes through',
  );

  requirement(
    R.informationalForwarded,
    async () => {
      f.on('/hints/processing', { informational: [{ status: 102 }, { status: 103, headers: HINTS }], headers: { 'cache-control': 'no-store' }, body: 'slow' });
      const answer = await requestWithInformational(`${f.svc.dataUrl}/hints/processing`);
      assert.deepEqual(answer.informational.map((info) => info.statusCode), [102, 103]);
      assert.equal(answer.body, 'slow');
    },
    '102 Processing, then 103, in order',
    // RFC 9110 leaves 102 out and Node's HTTP/2 response cannot write one: svc forwards it over HTTP/1.1 only.
    overH2 && '102 has no HTTP/2 form in svc',
  );

  requirement(R.informationalNotToHttp10, async () => {
    f.on('/hints/http10', { informational: [{ status: 103, headers: HINTS }], headers: { 'cache-control': 'no-store' }, body: 'for an old client' });
    const raw = await http10Get(Number(new URL(f.svc.dataUrl).port), '/hints/http10');
    assert.match(raw, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(raw, /103/);
    assert.ok(raw.endsWith('for an old client'));
    assert.equal(f.originRequests('/hints/http10').length, 1, 'the origin did send its 103');
  }, undefined, RAW_HTTP1_SKIP);

  test('svc: of two requests sharing one origin request, the one that made it gets the 103', async () => {
    f.on('/hints/shared', { informational: [{ status: 103, headers: HINTS }], headers: { 'cache-control': 'max-age=600' }, body: 'page', delayMs: 300 });
    const answers = await Promise.all([0, 1].map(() => requestWithInformational(`${f.svc.dataUrl}/hints/shared`)));
    assert.equal(f.originRequests('/hints/shared').length, 1);
    assert.deepEqual(answers.map((answer) => answer.informational.length).sort(), [0, 1]);
    assert.deepEqual(answers.map((answer) => answer.xCache).sort(), ['HIT', 'MISS']);
  });

  test('svc: a hit replays no informational answer', async () => {
    f.on('/hints/hit', { informational: [{ status: 103, headers: HINTS }], headers: { 'cache-control': 'max-age=600' }, body: 'page' });
    await requestWithInformational(`${f.svc.dataUrl}/hints/hit`);
    const hit = await requestWithInformational(`${f.svc.dataUrl}/hints/hit`);
    assert.equal(hit.xCache, 'HIT');
    assert.deepEqual(hit.informational, []);
  });
});
