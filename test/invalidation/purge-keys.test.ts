// Issue 15 item 5 (taken into issue 14): a purge or refresh keys the operator's URL with exactly the
// data plane's rules, so what a client stored under a raw target is what the purge removes: dot
// segments, braces, angle brackets in a query, percent-encoding kept as spelled; a purge that matches
// nothing says so (count 0).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { fetchRaw } from '../support/http.js';

const TOKEN = 'test-admin-token-0123456789';

describe('purge keys are the data plane\'s keys', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  before(async () => {
    origin = await startTestOrigin((request) =>
      request.headers['if-none-match'] === '"v"'
        ? { status: 304, headers: { etag: '"v"', 'cache-control': 'max-age=600' } }
        : { headers: { 'cache-control': 'max-age=600', etag: '"v"' }, body: `body of ${request.url}` },
    );
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  const get = (target: string) => sendRaw(svc.dataUrl, rawGet(target, ['Host: shop.test']), { untilResponse: true });
  const admin = async (path: string, url: string) => {
    const answer = await fetchRaw(`${svc.adminUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    assert.equal(answer.status, 200, answer.body);
    return JSON.parse(answer.body) as { count: number; keys: string[] };
  };

  const cases: [string, string, string][] = [
    ['dot segments', '/a/./b/../c', 'http://shop.test/a/./b/../c'],
    ['braces', '/p/{id}', 'http://shop.test/p/{id}'],
    ['angle brackets and quotes in a query', '/q?x=<1>&y="2"', 'http://shop.test/q?x=<1>&y="2"'],
    ['percent-encoding as spelled', '/t/%7Euser', 'http://shop.test/t/%7Euser'],
    ['a fragment the operator pasted', '/frag', 'http://SHOP.test:80/frag#section'],
    ['non-ASCII the operator typed, sent percent-encoded by clients', '/caf%C3%A9', 'http://shop.test/café'],
  ];
  for (const [name, target, url] of cases) {
    test(`${name}: ${url} purges what ${target} stored`, async () => {
      await get(target);
      assert.equal((await get(target)).headers['x-cache'], 'HIT');
      const purged = await admin('/v1/purge', url);
      assert.equal(purged.count, 1);
      assert.equal(purged.keys[0], `http://shop.test${target}`);
      assert.equal((await get(target)).headers['x-cache'], 'MISS');
    });
  }

  test('another spelling of a URL is another key: %7e does not purge ~, /a/b does not purge /a/./b', async () => {
    await get('/s/~user');
    await get('/s/x/./y');
    assert.equal((await admin('/v1/purge', 'http://shop.test/s/%7euser')).count, 0);
    assert.equal((await admin('/v1/purge', 'http://shop.test/s/x/y')).count, 0);
    assert.equal((await get('/s/~user')).headers['x-cache'], 'HIT');
    assert.equal((await get('/s/x/./y')).headers['x-cache'], 'HIT');
  });

  test('a refresh uses the same keys: /r/{id} is revalidated', async () => {
    await get('/r/{id}');
    const refreshed = await admin('/v1/refresh', 'http://shop.test/r/{id}');
    assert.equal(refreshed.count, 1);
    assert.equal((await get('/r/{id}')).headers['x-cache'], 'REVALIDATED');
  });

  test('a purge that matches nothing answers count 0 with the keys it looked at', async () => {
    assert.deepEqual(await admin('/v1/purge', 'https://shop.test/never?x=1'), {
      status: 'purged',
      count: 0,
      keys: ['https://shop.test/never?x=1', 'http://shop.test/never?x=1'],
    });
  });
});
