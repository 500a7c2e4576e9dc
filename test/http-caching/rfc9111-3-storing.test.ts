// RFC 9111 §3 through a real svc node: which statuses are stored by default, Authorization (§3.5),
// Set-Cookie (svc's choice, docs/http-caching.md) and HEAD (answered from a stored GET).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';

const LAST_MODIFIED = 'Mon, 01 Jan 2024 00:00:00 GMT';

interface StatusCase {
  status: number;
  headers: Record<string, string>;
  stored: boolean;
}

const statusCases: StatusCase[] = [
  // Heuristically cacheable statuses (RFC 9110 §15.1) with only a Last-Modified.
  { status: 200, headers: { 'last-modified': LAST_MODIFIED }, stored: true },
  { status: 203, headers: { 'last-modified': LAST_MODIFIED }, stored: true },
  { status: 301, headers: { 'last-modified': LAST_MODIFIED, location: '/moved' }, stored: true },
  { status: 308, headers: { 'last-modified': LAST_MODIFIED, location: '/moved' }, stored: true },
  { status: 404, headers: { 'last-modified': LAST_MODIFIED }, stored: true },
  { status: 405, headers: { 'last-modified': LAST_MODIFIED, allow: 'GET' }, stored: true },
  { status: 410, headers: { 'last-modified': LAST_MODIFIED }, stored: true },
  { status: 501, headers: { 'last-modified': LAST_MODIFIED }, stored: true },
  // Not heuristically cacheable: only explicit freshness stores them.
  { status: 500, headers: { 'last-modified': LAST_MODIFIED }, stored: false },
  { status: 503, headers: { 'last-modified': LAST_MODIFIED }, stored: false },
  { status: 302, headers: { 'last-modified': LAST_MODIFIED, location: '/found' }, stored: false },
  { status: 500, headers: { 'cache-control': 'max-age=60' }, stored: true },
  { status: 302, headers: { 'cache-control': 'max-age=60', location: '/found' }, stored: true },
  { status: 204, headers: { 'cache-control': 'max-age=60' }, stored: true },
];

describe('RFC 9111 §3 storing through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  statusCases.forEach((c, i) => {
    const how = Object.keys(c.headers).includes('cache-control') ? 'with max-age' : 'with only Last-Modified';
    test(`${c.status} ${how} is ${c.stored ? '' : 'not '}stored`, async () => {
      const path = `/status/${i}`;
      const body = c.status === 204 ? '' : `status ${c.status}`;
      f.on(path, { status: c.status, headers: c.headers, body });
      const first = await f.get(path);
      const second = await f.get(path);
      assert.equal(second.status, c.status);
      assert.equal(second.body, body);
      assert.deepEqual(
        [header(first, 'x-cache'), header(second, 'x-cache')],
        c.stored ? ['MISS', 'HIT'] : ['BYPASS', 'BYPASS'],
      );
      assert.equal(f.originRequests(path).length, c.stored ? 1 : 2);
    });
  });

  const authorizationCases: { cacheControl: string; stored: boolean }[] = [
    { cacheControl: 'max-age=600', stored: false },
    { cacheControl: 'public, max-age=600', stored: true },
    { cacheControl: 's-maxage=600', stored: true },
    { cacheControl: 'max-age=600, must-revalidate', stored: true },
  ];
  authorizationCases.forEach((c, i) => {
    test(`Authorization with "${c.cacheControl}" is ${c.stored ? '' : 'not '}stored (§3.5)`, async () => {
      const path = `/authorization/${i}`;
      f.on(path, { headers: { 'cache-control': c.cacheControl }, body: 'for authorised eyes' });
      const options = { headers: { authorization: 'Bearer token-1' } };
      const first = await f.get(path, options);
      const second = await f.get(path, options);
      assert.deepEqual([header(first, 'x-cache'), header(second, 'x-cache')], c.stored ? ['MISS', 'HIT'] : ['BYPASS', 'BYPASS']);
      assert.equal(f.originRequests(path)[0]?.headers.authorization, 'Bearer token-1');
    });
  });

  test('Set-Cookie: the response is relayed with its cookie and not stored', async () => {
    f.on('/cookie/plain', { headers: { 'cache-control': 'max-age=600', 'set-cookie': 'session=abc' }, body: 'cookie' });
    const first = await f.get('/cookie/plain');
    const second = await f.get('/cookie/plain');
    assert.equal(header(first, 'set-cookie'), 'session=abc');
    assert.deepEqual([header(first, 'x-cache'), header(second, 'x-cache')], ['BYPASS', 'BYPASS']);
  });

  test('Set-Cookie named in private="set-cookie": stored, and never replayed to another client', async () => {
    f.on('/cookie/named', { headers: { 'cache-control': 'private="set-cookie", max-age=600', 'set-cookie': 'session=abc' }, body: 'shared part' });
    await f.get('/cookie/named');
    const hit = await f.get('/cookie/named');
    assert.equal(header(hit, 'x-cache'), 'HIT');
    assert.equal(hit.body, 'shared part');
    assert.equal(header(hit, 'set-cookie'), undefined);
  });

  test('HEAD on a miss fetches GET from the origin and stores it; a later GET is a HIT with the body', async () => {
    f.on('/head/first', { headers: { 'cache-control': 'max-age=600', 'x-kind': 'head' }, body: 'the body HEAD did not get' });
    const head = await f.get('/head/first', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal(header(head, 'x-kind'), 'head');
    assert.deepEqual(f.originRequests('/head/first').map((r) => r.method), ['GET']);
    const get = await f.get('/head/first');
    assert.equal(header(get, 'x-cache'), 'HIT');
    assert.equal(get.body, 'the body HEAD did not get');
  });

  test('HEAD on a miss whose answer may not be stored is answered too (BYPASS)', async () => {
    f.on('/head/uncacheable', { headers: { 'cache-control': 'no-store', 'x-kind': 'bypass' }, body: 'x'.repeat(100_000) });
    const head = await f.get('/head/uncacheable', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(header(head, 'x-cache'), 'BYPASS');
    assert.equal(header(head, 'x-kind'), 'bypass');
    assert.equal(head.body, '');
  });

  test('HEAD after a GET is answered from the stored response with the same fields', async () => {
    f.on('/head/after', { headers: { 'cache-control': 'max-age=600', etag: '"h"' }, body: '12345' });
    const get = await f.get('/head/after');
    const head = await f.get('/head/after', { method: 'HEAD' });
    assert.equal(header(head, 'x-cache'), 'HIT');
    assert.equal(header(head, 'etag'), header(get, 'etag'));
    assert.equal(header(head, 'content-length'), '5');
    assert.equal(head.body, '');
    assert.equal(f.originRequests('/head/after').length, 1);
  });
});
