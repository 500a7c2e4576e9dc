// Issue 14 item 2, on a real node with raw bytes: Host is validated (missing or repeated: 400),
// absolute-form targets are served with their authority first, and the cache key is built from
// parsed parts, scheme included, so no Host spells another resource's key.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { eventually } from '../support/eventually.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { metricValue } from '../support/caching-fixture.js';
import { fetchRaw } from '../support/http.js';

/** The origin answers with what it was asked, cacheable, and a body that says which scheme it saw. */
async function echoOrigin(): Promise<TestOrigin> {
  return startTestOrigin((request) => ({
    headers: { 'cache-control': 'max-age=600' },
    body: `${request.headers['x-forwarded-proto']}://${request.headers.host}${request.url}`,
  }));
}

describe('Host and the cache key', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  before(async () => {
    origin = await echoOrigin();
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });
  const send = (bytes: string) => sendRaw(svc.dataUrl, bytes, { untilResponse: true });
  const rejectedReasons = () => svc.logs.lines.filter((line) => line.msg === 'rejected').map((line) => line.reason);

  test('an HTTP/1.1 request without Host is 400 (RFC 9112 §3.2), logged once with its reason', async () => {
    const before = rejectedReasons().length;
    const answer = await send('GET /no-host HTTP/1.1\r\n\r\n');
    assert.equal(answer.status, 400);
    // Logged by the thread that answered, and relayed: it may come a moment after the answer.
    await eventually('the rejection logged', () => rejectedReasons().slice(before), (reasons) => reasons.length > 0);
    assert.deepEqual(rejectedReasons().slice(before), ['missing_host']);
    assert.equal(origin.requests.filter((request) => request.url === '/no-host').length, 0);
  });

  test('two Host lines are 400, not a 502', async () => {
    const answer = await send(rawGet('/two-hosts', ['Host: a.test', 'Host: b.test']));
    assert.equal(answer.status, 400);
    await eventually('the rejection logged', () => rejectedReasons().at(-1), (reason) => reason === 'repeated_host');
  });

  test('a Host that is not reg-name[:port] or an IP literal is 400, and its body shows no internals', async () => {
    for (const host of ['shop.test/static', '[', 'shop.test%2fstatic', 'a b.test', 'shop.test:99999', 'user@shop.test']) {
      const answer = await send(rawGet('/app.js', [`Host: ${host}`]));
      assert.equal(answer.status, 400, host);
      assert.match(answer.body, /^svc: 400 Bad Request \(request id [0-9a-f-]{36}\)\n$/);
    }
    assert.equal(origin.requests.filter((request) => request.url === '/app.js').length, 0);
  });

  test('Host: shop.test/static cannot store /app.js under the key of /static/app.js', async () => {
    await send(rawGet('/app.js', ['Host: shop.test/static']));
    const victim = await send(rawGet('/static/app.js', ['Host: shop.test']));
    assert.equal(victim.status, 200);
    assert.equal(victim.headers['x-cache'], 'MISS');
    assert.equal(victim.body, 'http://shop.test/static/app.js');
  });

  test('an absolute-form target is served, its authority taking precedence over Host (RFC 9112 §3.2.2)', async () => {
    const answer = await send(rawGet('http://abs.test/page?x=1', ['Host: other.test']));
    assert.equal(answer.status, 200);
    assert.equal(answer.body, 'http://abs.test/page?x=1', 'the origin is asked for the origin-form path with the target\'s host');
    const same = await send(rawGet('/page?x=1', ['Host: ABS.test:80']));
    assert.equal(same.headers['x-cache'], 'HIT', 'both spellings name one key: host lower-cased, default port removed');
  });

  test('an absolute-form target may not claim a scheme the connection does not have: 421', async () => {
    const answer = await send(rawGet('https://abs.test/secure', ['Host: abs.test']));
    assert.equal(answer.status, 421);
    await eventually('the rejection logged', () => rejectedReasons().at(-1), (reason) => reason === 'scheme_mismatch');
  });

  test('the origin gets the normalised authority the key holds, whatever the spelling', async () => {
    await send(rawGet('/spelling', ['Host: Spelling.TEST:80']));
    assert.equal(origin.requests.at(-1)!.headers.host, 'spelling.test');
  });

  test('a client\'s X-Forwarded-Proto changes neither the key nor what the origin is told', async () => {
    const http = await send(rawGet('/scheme', ['Host: scheme.test']));
    const claimed = await send(rawGet('/scheme', ['Host: scheme.test', 'X-Forwarded-Proto: https']));
    assert.equal(http.body, 'http://scheme.test/scheme');
    assert.equal(claimed.headers['x-cache'], 'HIT');
    assert.equal(claimed.body, 'http://scheme.test/scheme');
  });

  test('the data plane survives and counts nothing as smuggling here', async () => {
    assert.equal((await fetchRaw(`${svc.adminUrl}/healthz`)).status, 200);
    assert.equal(metricValue((await fetchRaw(`${svc.adminUrl}/metrics`)).body, 'svc_http_smuggling_rejected_total'), 0);
  });
});

describe('the scheme is part of the key', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  before(async () => {
    origin = await echoOrigin();
    // The test client is the trusted proxy (a TLS terminator in front of svc).
    svc = await startSvc([origin.url], { config: { trusted_proxies: ['127.0.0.1', '::1'] } });
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });
  const send = (bytes: string) => sendRaw(svc.dataUrl, bytes, { untilResponse: true });

  test('http and https copies of one URL are kept apart: an https client never gets the http answer', async () => {
    const http = await send(rawGet('/both', ['Host: shop.test']));
    const https = await send(rawGet('/both', ['Host: shop.test', 'X-Forwarded-Proto: https']));
    assert.equal(http.body, 'http://shop.test/both');
    assert.equal(https.headers['x-cache'], 'MISS');
    assert.equal(https.body, 'https://shop.test/both');
    assert.equal((await send(rawGet('/both', ['Host: shop.test', 'X-Forwarded-Proto: https']))).headers['x-cache'], 'HIT');
    assert.equal((await send(rawGet('/both', ['Host: shop.test']))).body, 'http://shop.test/both');
  });

  test('a purge of either URL removes both copies and says which keys it looked at', async () => {
    await send(rawGet('/purged', ['Host: shop.test']));
    await send(rawGet('/purged', ['Host: shop.test', 'X-Forwarded-Proto: https']));
    const answer = await fetchRaw(`${svc.adminUrl}/v1/purge`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://shop.test/purged' }),
    });
    assert.deepEqual(JSON.parse(answer.body), { status: 'purged', count: 2, keys: ['https://shop.test/purged', 'http://shop.test/purged'] });
    assert.equal((await send(rawGet('/purged', ['Host: shop.test']))).headers['x-cache'], 'MISS');
    assert.equal((await send(rawGet('/purged', ['Host: shop.test', 'X-Forwarded-Proto: https']))).headers['x-cache'], 'MISS');
  });

  test('a trusted proxy\'s X-Forwarded-Host is the authority: keyed, sent as Host, never a stranger to the key', async () => {
    const answer = await send(rawGet('/fh', ['Host: internal.lb', 'X-Forwarded-Host: public.test']));
    assert.equal(answer.body, 'http://public.test/fh');
    const direct = await send(rawGet('/fh', ['Host: public.test']));
    assert.equal(direct.headers['x-cache'], 'HIT');
  });

  test('a trusted proxy that sends a scheme other than http or https is refused', async () => {
    const answer = await send(rawGet('/bad-proto', ['Host: shop.test', 'X-Forwarded-Proto: gopher']));
    assert.equal(answer.status, 400);
  });
});
