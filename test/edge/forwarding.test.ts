// Issue 14 items 3 and 4, on a real node with raw bytes: Connection can only remove true hop-by-hop
// fields, svc states the forwarding fields itself (extending a trusted proxy's), and fields that make
// an origin act on another method, URL, host or scheme are stripped before the origin.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { rawGet, sendRaw } from '../support/raw-http.js';

async function withNode(config: Record<string, unknown>, run: (svc: SvcUnderTest, origin: TestOrigin) => Promise<void>): Promise<void> {
  const origin = await startTestOrigin((request) => {
    const language = request.headers['accept-language'] ?? 'default';
    return { headers: { 'cache-control': 'max-age=600', vary: 'Accept-Language' }, body: `language=${language}` };
  });
  const svc = await startSvc([origin.url], { config });
  try {
    await run(svc, origin);
  } finally {
    await svc.stop();
    await origin.close();
  }
}

const send = (svc: SvcUnderTest, bytes: string) => sendRaw(svc.dataUrl, bytes, { untilResponse: true });

describe('Connection removes only hop-by-hop fields (item 3)', () => {
  test('Connection: host does not take Host away from the origin', () =>
    withNode({}, async (svc, origin) => {
      const answer = await send(svc, rawGet('/c-host', ['Host: victim.test', 'Connection: host']));
      assert.equal(answer.status, 200);
      assert.equal(origin.requests.at(-1)!.headers.host, 'victim.test');
    }));

  test('Connection: accept-language cannot store the default-language answer under another variant', () =>
    withNode({}, async (svc, origin) => {
      const poisoned = await send(svc, rawGet('/c-vary', ['Host: shop.test', 'Accept-Language: fr', 'Connection: accept-language']));
      assert.equal(poisoned.body, 'language=fr', 'the origin saw the field the variant is keyed on');
      assert.equal(origin.requests.at(-1)!.headers['accept-language'], 'fr');
      const french = await send(svc, rawGet('/c-vary', ['Host: shop.test', 'Accept-Language: fr']));
      assert.equal(french.headers['x-cache'], 'HIT');
      assert.equal(french.body, 'language=fr');
    }));

  test('Connection cannot remove framing or forwarding fields either', () =>
    withNode({}, async (svc, origin) => {
      const body = 'x=1';
      const answer = await send(
        svc,
        `POST /c-post HTTP/1.1\r\nHost: shop.test\r\nContent-Length: ${body.length}\r\nContent-Type: text/plain\r\n` +
          `Connection: content-length, content-type, x-forwarded-for, forwarded\r\n\r\n${body}`,
      );
      assert.equal(answer.status, 200);
      const seen = origin.requests.at(-1)!.headers;
      assert.equal(seen['content-length'], '3');
      assert.equal(seen['content-type'], 'text/plain');
      assert.equal(seen['x-forwarded-for'], '127.0.0.1');
      assert.match(String(seen.forwarded), /for=127\.0\.0\.1/);
    }));

  test('the true hop-by-hop fields are still dropped', () =>
    withNode({}, async (svc, origin) => {
      await send(svc, rawGet('/c-hop', ['Host: shop.test', 'Keep-Alive: timeout=5', 'TE: trailers', 'Upgrade: websocket', 'Proxy-Authorization: Basic eA==', 'Connection: keep-alive, te, upgrade']));
      const seen = origin.requests.at(-1)!.headers;
      for (const name of ['keep-alive', 'te', 'upgrade', 'proxy-authorization']) assert.equal(seen[name], undefined, name);
    }));

  test('there is one hop-by-hop list in the code base (src/http/hop-by-hop.ts)', async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const holders: string[] = [];
    for (const dir of ['src', 'cluster', 'transports']) {
      for (const entry of await readdir(join(root, dir), { recursive: true })) {
        if (!entry.endsWith('.ts')) continue;
        const text = await readFile(join(root, dir, entry), 'utf8');
        if (/'proxy-connection'/.test(text)) holders.push(join(dir, entry));
      }
    }
    assert.deepEqual(holders, [join('src', 'http', 'hop-by-hop.ts')]);
  });
});

describe('forwarding fields (item 4)', () => {
  test('from an untrusted client, X-Forwarded-* and Forwarded are replaced by what svc sees', () =>
    withNode({}, async (svc, origin) => {
      await send(
        svc,
        rawGet('/f-untrusted', [
          'Host: shop.test',
          'X-Forwarded-For: 6.6.6.6',
          'X-Forwarded-Proto: https',
          'X-Forwarded-Host: evil.test',
          'Forwarded: for=6.6.6.6;host=evil.test;proto=https',
        ]),
      );
      const seen = origin.requests.at(-1)!.headers;
      assert.equal(seen['x-forwarded-for'], '127.0.0.1');
      assert.equal(seen['x-forwarded-proto'], 'http');
      assert.equal(seen['x-forwarded-host'], 'shop.test');
      assert.equal(seen.forwarded, 'for=127.0.0.1;host=shop.test;proto=http');
      assert.equal(seen.host, 'shop.test');
    }));

  test('from a trusted proxy, they are extended: the chain kept, svc\'s hop appended', () =>
    withNode({ trusted_proxies: ['127.0.0.0/8'] }, async (svc, origin) => {
      await send(
        svc,
        rawGet('/f-trusted', ['Host: shop.test', 'X-Forwarded-For: 203.0.113.7', 'X-Forwarded-Proto: https', 'Forwarded: for=203.0.113.7;proto=https']),
      );
      const seen = origin.requests.at(-1)!.headers;
      assert.equal(seen['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
      assert.equal(seen['x-forwarded-proto'], 'https');
      assert.equal(seen.forwarded, 'for=203.0.113.7;proto=https, for=127.0.0.1;host=shop.test;proto=https');
    }));

  test('svc\'s forwarding fields reach the origin first and once: a client\'s copies are neither ahead of them nor instead of them (issue 29)', () =>
    withNode({}, async (svc, origin) => {
      const padding = Array.from({ length: 90 }, (_, i) => `X-F${i}: v`);
      const answer = await send(
        svc,
        rawGet('/f-first', ['X-Forwarded-For: 6.6.6.6', 'Forwarded: for=6.6.6.6', 'X-Forwarded-Host: evil.test', 'X-Forwarded-Proto: https', ...padding, 'Host: shop.test', 'X-Forwarded-For: 7.7.7.7']),
      );
      assert.equal(answer.status, 200);
      const raw = origin.requests.at(-1)!.rawHeaders;
      const names = raw.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
      const own = ['host', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-for', 'forwarded'];
      const firstOfClient = names.indexOf('x-f0');
      for (const name of own) assert.ok(names.indexOf(name) < firstOfClient, `${name} comes before any field of the client's`);
      for (const name of own) assert.equal(names.filter((seen) => seen === name).length, 1, name);
      const value = (name: string) => raw[names.indexOf(name) * 2 + 1];
      assert.equal(value('x-forwarded-for'), '127.0.0.1');
      assert.equal(value('forwarded'), 'for=127.0.0.1;host=shop.test;proto=http');
      assert.equal(value('x-forwarded-host'), 'shop.test');
      assert.equal(value('x-forwarded-proto'), 'http');
      assert.equal(names.filter((name) => name.startsWith('x-f') && /^x-f\d+$/.test(name)).length, padding.length, 'the client\'s other fields follow');
    }));

  test('from a trusted proxy, the extended chain comes first too', () =>
    withNode({ trusted_proxies: ['127.0.0.0/8'] }, async (svc, origin) => {
      await send(svc, rawGet('/f-first-trusted', ['X-Kept: 1', 'Host: shop.test', 'X-Forwarded-For: 203.0.113.7', 'Forwarded: for=203.0.113.7']));
      const raw = origin.requests.at(-1)!.rawHeaders;
      const names = raw.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
      assert.ok(names.indexOf('x-forwarded-for') < names.indexOf('x-kept') && names.indexOf('forwarded') < names.indexOf('x-kept'));
      assert.equal(raw[names.indexOf('x-forwarded-for') * 2 + 1], '203.0.113.7, 127.0.0.1');
      assert.equal(raw[names.indexOf('forwarded') * 2 + 1], 'for=203.0.113.7, for=127.0.0.1;host=shop.test;proto=http');
    }));

  test('method and URL overrides, and host or scheme hints svc does not key, are stripped by default', () =>
    withNode({}, async (svc, origin) => {
      const stripped = ['X-HTTP-Method-Override: DELETE', 'X-Original-URL: /admin', 'X-Rewrite-URL: /admin', 'X-Forwarded-Port: 8443', 'X-Forwarded-Ssl: on', 'X-Host: evil.test'];
      await send(svc, rawGet('/f-strip', ['Host: shop.test', ...stripped, 'X-Kept: yes']));
      const seen = origin.requests.at(-1)!.headers;
      for (const line of stripped) assert.equal(seen[line.split(':')[0]!.toLowerCase()], undefined, line);
      assert.equal(seen['x-kept'], 'yes');
    }));

  test('a route lists its own fields to strip (the list replaces the default)', () =>
    withNode(
      { routes: [{ name: 'main', match: { path_prefix: '/' }, pool: 'origin', strip_request_headers: ['cookie', 'x-debug'] }] },
      async (svc, origin) => {
        await send(svc, rawGet('/f-route', ['Host: shop.test', 'Cookie: a=1', 'X-Debug: 1', 'X-HTTP-Method-Override: PUT']));
        const seen = origin.requests.at(-1)!.headers;
        assert.equal(seen.cookie, undefined);
        assert.equal(seen['x-debug'], undefined);
        assert.equal(seen['x-http-method-override'], 'PUT', 'the operator chose to forward it');
      },
    ));

  test('no x-svc-* field a client sends reaches an origin', () =>
    withNode({}, async (svc, origin) => {
      await send(svc, rawGet('/f-svc', ['Host: shop.test', 'X-Svc-Anything: 1', 'x-svc-peer-hop: 1']));
      const names = Object.keys(origin.requests.at(-1)!.headers);
      assert.deepEqual(names.filter((name) => name.startsWith('x-svc-')), []);
    }));

  test('Expect is answered by svc (100 Continue), never forwarded: an upload with it is no 502 (RFC 9110 §10.1.1)', () =>
    withNode({}, async (svc, origin) => {
      const answer = await sendRaw(
        svc.dataUrl,
        'PUT /f-expect HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n',
        { untilResponse: true, then: [{ afterMs: 50, bytes: 'hello' }] },
      );
      assert.match(answer.text, /^HTTP\/1\.1 100 Continue\r\n\r\n/);
      assert.equal(answer.status, 200);
      assert.equal(origin.requests.at(-1)!.headers.expect, undefined);
      assert.equal(origin.requests.at(-1)!.headers['content-length'], '5');
    }));

  test('a request refused on its head gets its final status without a 100 Continue', () =>
    withNode({}, async (svc, origin) => {
      const before = origin.requests.length;
      const answer = await sendRaw(svc.dataUrl, 'PURGE /f-expect HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n', { untilResponse: true });
      assert.doesNotMatch(answer.text, /100 Continue/);
      assert.equal(answer.status, 405);
      assert.equal(origin.requests.length, before);
    }));

  test('an expectation svc cannot meet is 417', () =>
    withNode({}, async (svc) => {
      const answer = await sendRaw(svc.dataUrl, 'PUT /f-expect HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 1\r\nExpect: something-else\r\n\r\n', { untilResponse: true });
      assert.equal(answer.status, 417);
    }));
});
