// RFC 9111 §4 through a real svc node: when a stored response may answer a request at all (same target
// URI, a method it answers), the Age it carries, unsafe methods written through, and the most recent
// of several suitable responses.
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { exchange } from './exchanges.js';
import { R, requirement } from './rfc-requirements.js';

describe('RFC 9111 §4 constructing responses from the cache through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    // Exact Age values: real time must not carry an apparent age over a whole second.
    f = await startCachingFixture({ frozenClock: true });
  });
  after(() => f.close());

  requirement(R.reuseUriMatch, async () => {
    const reply = (request: { url?: string; headers: { host?: string } }): { headers: Record<string, string>; body: string } => ({
      headers: { 'cache-control': 'max-age=600' },
      body: `${request.headers.host ?? ''}${request.url ?? ''}`,
    });
    f.on('/uri', reply);
    f.on('/uri?x=1', reply);
    const stored = await f.get('/uri');
    await exchange(f, '/uri?x=1', undefined, [{ xCache: 'MISS', answerBody: stored.body.replace('/uri', '/uri?x=1') }]);
    await exchange(f, '/uri', undefined, [
      { headers: { host: 'other.example' }, xCache: 'MISS', answerBody: 'other.example/uri' },
      { xCache: 'HIT', answerBody: stored.body, originRequests: 2 },
    ]);
  });

  requirement(R.reuseMethodMatch, async () => {
    await exchange(f, '/method', (request) => ({ headers: { 'cache-control': 'max-age=600', allow: 'GET, HEAD, OPTIONS' }, body: `for ${request.method}` }), [
      { xCache: 'MISS', answerBody: 'for GET' },
      // A stored GET answers HEAD (RFC 9110 §9.3.2), never OPTIONS.
      { method: 'HEAD', xCache: 'HIT', answerBody: '', originRequests: 1 },
      { method: 'OPTIONS', xCache: 'BYPASS', answerBody: 'for OPTIONS', originRequests: 2 },
    ]);
  });

  requirement(R.ageOnReuse, async () => {
    // The origin's Age is replaced by current_age: never repeated, never left as it was.
    await exchange(f, '/age', { headers: { 'cache-control': 'max-age=600', age: '100' }, body: 'aged' }, [
      { xCache: 'MISS', fields: { age: '100' } },
      { advanceMs: 40_000, xCache: 'HIT', fields: { age: '140' } },
      { advanceMs: 5_000, method: 'HEAD', xCache: 'HIT', fields: { age: '145' } },
    ]);
  });

  requirement(R.unsafeWriteThrough, async () => {
    await exchange(
      f,
      '/unsafe',
      (request) => (request.method === 'GET' ? { headers: { 'cache-control': 'max-age=600' }, body: 'stored' } : { status: 201, body: `${request.method ?? ''} reached the origin` }),
      [
        { xCache: 'MISS', answerBody: 'stored' },
        { method: 'POST', body: 'data', status: 201, answerBody: 'POST reached the origin', originRequests: 2 },
        { method: 'PUT', body: 'data', status: 201, answerBody: 'PUT reached the origin', originRequests: 3 },
      ],
    );
    assert.deepEqual(f.originRequests('/unsafe').map((request) => request.method), ['GET', 'POST', 'PUT']);
  });

  requirement(R.mostRecent, async () => {
    // Two stored responses answer the last request: one varies on X-A, the newer one on X-B.
    await exchange(
      f,
      '/recent',
      (_request, count) => ({ headers: { 'cache-control': 'max-age=600', vary: count === 0 ? 'X-A' : 'X-B' }, body: `response ${count}` }),
      [
        { headers: { 'x-a': 'a1', 'x-b': 'b1' }, xCache: 'MISS', answerBody: 'response 0' },
        { headers: { 'x-a': 'a2', 'x-b': 'b1' }, xCache: 'MISS', answerBody: 'response 1' },
        { headers: { 'x-a': 'a1', 'x-b': 'b1' }, xCache: 'HIT', answerBody: 'response 1', originRequests: 2 },
        // The older one still answers what only it matches.
        { headers: { 'x-a': 'a1', 'x-b': 'b2' }, xCache: 'HIT', answerBody: 'response 0', originRequests: 2 },
      ],
    );
  });
});
