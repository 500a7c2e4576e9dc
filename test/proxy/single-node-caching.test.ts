// Issue 2, end to end: a real origin, a real svc node, a real HTTP client.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw, header, rawHttpGet } from '../support/http.js';

describe('single-node caching', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;

  before(async () => {
    origin = await startTestOrigin();
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('a cacheable answer is a MISS, then a HIT without another origin request', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=60', 'content-type': 'text/plain' }, body: 'hello' }));
    const before = origin.requests.length;
    const first = await fetchRaw(`${svc.dataUrl}/miss-then-hit`);
    const second = await fetchRaw(`${svc.dataUrl}/miss-then-hit`);
    assert.equal(header(first, 'x-cache'), 'MISS');
    assert.equal(header(second, 'x-cache'), 'HIT');
    assert.equal(second.body, 'hello');
    assert.equal(header(second, 'content-type'), 'text/plain');
    assert.equal(origin.requests.length - before, 1);
  });

  test('Age grows with the time an entry has been stored', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=600', date: new Date(svc.clock.now()).toUTCString() }, body: 'aging' }));
    await fetchRaw(`${svc.dataUrl}/aging`);
    const early = await fetchRaw(`${svc.dataUrl}/aging`);
    svc.clock.advance(42_000);
    const later = await fetchRaw(`${svc.dataUrl}/aging`);
    assert.equal(header(later, 'x-cache'), 'HIT');
    const grown = Number(header(later, 'age')) - Number(header(early, 'age'));
    assert.ok(grown >= 41 && grown <= 43, `Age grew by ${grown}s over 42s`);
  });

  test('an upstream Age is added to the time in svc (RFC 9111 §4.2.3)', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=600', age: '100' }, body: 'upstream-age' }));
    const answer = await fetchRaw(`${svc.dataUrl}/upstream-age`);
    const hit = await fetchRaw(`${svc.dataUrl}/upstream-age`);
    assert.ok(Number(header(answer, 'age')) >= 100);
    assert.ok(Number(header(hit, 'age')) >= 100);
  });

  for (const directive of ['no-store', 'private']) {
    test(`Cache-Control: ${directive} answers are BYPASS and never stored`, async () => {
      origin.handle(() => ({ headers: { 'cache-control': `${directive}, max-age=60` }, body: directive }));
      const before = origin.requests.length;
      const first = await fetchRaw(`${svc.dataUrl}/${directive}`);
      const second = await fetchRaw(`${svc.dataUrl}/${directive}`);
      assert.equal(header(first, 'x-cache'), 'BYPASS');
      assert.equal(header(second, 'x-cache'), 'BYPASS');
      assert.equal(origin.requests.length - before, 2);
    });
  }

  test('concurrent misses for one key make one origin request', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'coalesced', delayMs: 300 }));
    const before = origin.requests.filter((r) => r.url === '/coalesce').length;
    const answers = await Promise.all(Array.from({ length: 50 }, () => fetchRaw(`${svc.dataUrl}/coalesce`)));
    assert.equal(origin.requests.filter((r) => r.url === '/coalesce').length - before, 1);
    assert.ok(answers.every((a) => a.status === 200 && a.body === 'coalesced'));
    assert.equal(answers.filter((a) => header(a, 'x-cache') === 'MISS').length, 1);
  });

  test('HEAD is answered from the entry a GET stored, without a body', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'head body' }));
    await fetchRaw(`${svc.dataUrl}/head`);
    const head = await fetchRaw(`${svc.dataUrl}/head`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(header(head, 'x-cache'), 'HIT');
    assert.equal(header(head, 'content-length'), '9');
    assert.equal(head.body, '');
  });

  test('hop-by-hop fields are not forwarded; Via and X-Forwarded-For are set', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'no-store', 'x-remove-me': '1', connection: 'x-remove-me' }, body: 'hop' }));
    // node:http, because undici will not send a Connection field that lists other fields.
    const answer = await rawHttpGet(`${svc.dataUrl}/hop`, { 'keep-alive': 'timeout=5', te: 'trailers', connection: 'keep-alive, te' });
    const seen = origin.requests.at(-1)!;
    assert.equal(seen.headers['te'], undefined);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.match(String(seen.headers.via), /1\.1 svc/);
    assert.equal(answer.headers['x-remove-me'], undefined);
    assert.match(String(answer.headers.via), /1\.1 svc/);
  });

  test('a request matching no route gets 404 with a clear body', async () => {
    const other = await startSvc([origin.url], {
      config: { routes: [{ name: 'api', match: { path_prefix: '/api/' }, pool: 'origin' }] },
    });
    try {
      const answer = await fetchRaw(`${other.dataUrl}/elsewhere`);
      assert.equal(answer.status, 404);
      const requestId = /request id ([0-9a-f-]{36})/.exec(answer.body)?.[1];
      assert.ok(requestId, answer.body);
      const line = await other.logs.find('the line of the request', (logged) => logged.request_id === requestId);
      assert.equal(line.msg, 'rejected');
      assert.equal(line.reason, 'no_route');
      assert.equal(line.path, '/elsewhere');
    } finally {
      await other.stop();
    }
  });
});

describe('ttl_override', () => {
  test('caches for the configured time whatever the origin says, and forwards its headers unchanged', async () => {
    const origin = await startTestOrigin(() => ({
      headers: { 'cache-control': 'no-cache, max-age=0', 'x-origin': 'Exact  Value', etag: '"v1"' },
      body: 'overridden',
    }));
    const svc = await startSvc([origin.url], {
      config: { routes: [{ name: 'forced', match: { path_prefix: '/' }, pool: 'origin', cache: { ttl_override: '30s' } }] },
    });
    try {
      const first = await fetchRaw(`${svc.dataUrl}/forced`);
      const second = await fetchRaw(`${svc.dataUrl}/forced`);
      assert.equal(header(first, 'x-cache'), 'MISS');
      assert.equal(header(second, 'x-cache'), 'HIT');
      assert.equal(origin.requests.length, 1);
      assert.equal(header(second, 'cache-control'), 'no-cache, max-age=0');
      assert.equal(header(second, 'x-origin'), 'Exact  Value');
      assert.equal(header(second, 'etag'), '"v1"');
      svc.clock.advance(31_000);
      const expired = await fetchRaw(`${svc.dataUrl}/forced`);
      assert.notEqual(header(expired, 'x-cache'), 'HIT');
      assert.equal(origin.requests.length, 2);
    } finally {
      await svc.stop();
      await origin.close();
    }
  });
});

describe('hot tier bound', () => {
  test('a tiny hot_max_bytes evicts the least recently used entry', async () => {
    const origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `${request.url}:`.padEnd(400, 'x') }));
    const svc = await startSvc([origin.url], { config: { hot_max_bytes: 1500 } });
    try {
      await fetchRaw(`${svc.dataUrl}/a`);
      await fetchRaw(`${svc.dataUrl}/b`);
      await fetchRaw(`${svc.dataUrl}/a`); // /a is now the most recently used
      await fetchRaw(`${svc.dataUrl}/c`); // needs room: /b goes
      const a = await fetchRaw(`${svc.dataUrl}/a`);
      const b = await fetchRaw(`${svc.dataUrl}/b`);
      assert.equal(header(a, 'x-cache'), 'HIT');
      assert.equal(header(b, 'x-cache'), 'MISS');
      const metrics = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
      const evictions = Number(/^svc_hot_store_evictions_total (\d+)/m.exec(metrics)?.[1]);
      assert.ok(evictions >= 1, `evictions: ${evictions}`);
      const bytes = Number(/^svc_hot_store_bytes (\d+)/m.exec(metrics)?.[1]);
      assert.ok(bytes > 0 && bytes <= 1500, `hot bytes: ${bytes}`);
    } finally {
      await svc.stop();
      await origin.close();
    }
  });
});
