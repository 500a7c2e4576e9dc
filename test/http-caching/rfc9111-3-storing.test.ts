// RFC 9111 §3 through a real svc node: which responses are stored (§3), which of their fields
// (§3.1), incomplete responses (§3.3), Authorization (§3.5), and svc's choices: Set-Cookie, HEAD.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { exchange } from './exchanges.js';
import { R, requirement } from './rfc-requirements.js';
import { h2Fetch, speaksH2 } from '../support/test-protocol.js';

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
  // Not heuristically cacheable: only explicit freshness stores them. `public` alone is not enough in
  // svc (issue 14, a stricter reading of RFC 9111 §4.2.2 that the MUST NOT allows).
  { status: 302, headers: { 'last-modified': LAST_MODIFIED, location: '/found' }, stored: false },
  { status: 500, headers: { 'last-modified': LAST_MODIFIED }, stored: false },
  { status: 503, headers: { 'last-modified': LAST_MODIFIED }, stored: false },
  { status: 302, headers: { 'cache-control': 'max-age=60', location: '/found' }, stored: true },
  { status: 302, headers: { 'cache-control': 'public', 'last-modified': LAST_MODIFIED, location: '/found' }, stored: false },
  { status: 302, headers: { expires: 'Thu, 01 Jan 2099 00:00:00 GMT', location: '/found' }, stored: true },
  { status: 302, headers: { 'cache-control': 's-maxage=60', location: '/found' }, stored: true },
  { status: 500, headers: { 'cache-control': 'max-age=60' }, stored: true },
  { status: 204, headers: { 'cache-control': 'max-age=60' }, stored: true },
];

/** A GET through node:http that records the informational (1xx) answers before the final one. */
async function getWithInformational(url: string): Promise<{ status: number; informational: number[] }> {
  if (speaksH2(url)) {
    const answer = await h2Fetch(url, {});
    return { status: answer.status, informational: answer.informational.map((info) => info.statusCode) };
  }
  return new Promise((resolve, reject) => {
    const informational: number[] = [];
    const request = get(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, informational }));
    });
    request.on('information', (info) => informational.push(info.statusCode));
    request.on('error', reject);
  });
}

describe('RFC 9111 §3 storing through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  statusCases.forEach((c, i) => {
    const how = Object.entries(c.headers)
      .filter(([name]) => name !== 'location' && name !== 'allow')
      .map(([name, value]) => `${name}: ${value}`)
      .join(', ');
    requirement(
      R.storeNeedsPermission,
      async () => {
        const body = c.status === 204 ? '' : `status ${c.status}`;
        // A stored 5xx is a MISS like any stored answer; one not stored is a MISS too (a failed fill).
        const notStored = c.status >= 500 ? 'MISS' : 'BYPASS';
        await exchange(f, `/status/${i}`, { status: c.status, headers: c.headers, body }, [
          { status: c.status, xCache: c.stored ? 'MISS' : notStored },
          { status: c.status, answerBody: body, xCache: c.stored ? 'HIT' : notStored, originRequests: c.stored ? 1 : 2 },
        ]);
      },
      `${c.status} with ${how} is ${c.stored ? '' : 'not '}stored`,
    );
  });

  requirement(R.storeUnderstoodMethod, async () => {
    // svc stores GET answers only: a POST's answer, cacheable as it says it is, is not kept.
    await exchange(f, '/method/post', (request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `answer to ${request.method}` }), [
      { method: 'POST', body: 'x', answerBody: 'answer to POST', xCache: 'BYPASS' },
      { answerBody: 'answer to GET', xCache: 'MISS', originRequests: 2 },
      { answerBody: 'answer to GET', xCache: 'HIT', originRequests: 2 },
    ]);
  });

  requirement(R.storeFinalStatus, async () => {
    f.on('/final', { informational: [{ status: 103, headers: { link: '</style.css>; rel=preload; as=style' } }], headers: { 'cache-control': 'max-age=600' }, body: 'final' });
    const first = await getWithInformational(`${f.svc.dataUrl}/final`);
    const second = await getWithInformational(`${f.svc.dataUrl}/final`);
    assert.deepEqual(first, { status: 200, informational: [103] });
    // The stored response is the final 200 alone: a hit replays no 103.
    assert.deepEqual(second, { status: 200, informational: [] });
    assert.equal(f.originRequests('/final').length, 1);
  });

  requirement(
    R.storeUnderstoodPartialStatus,
    async () => {
      await exchange(f, '/partial/206', { status: 206, headers: { 'cache-control': 'max-age=600', 'content-range': 'bytes 0-3/10' }, body: '0123' }, [
        { status: 206, xCache: 'BYPASS' },
        { status: 206, xCache: 'BYPASS', originRequests: 2 },
      ]);
    },
    'a 206 is relayed, never stored',
  );
  requirement(
    R.storeUnderstoodPartialStatus,
    async () => {
      await exchange(f, '/partial/304', { status: 304, headers: { 'cache-control': 'max-age=600', etag: '"x"' } }, [
        { status: 304, xCache: 'BYPASS' },
        { status: 304, xCache: 'BYPASS', originRequests: 2 },
      ]);
    },
    'a 304 to an unconditional request is relayed, never stored',
  );
  for (const cacheControl of ['must-understand, no-store, max-age=600', 'must-understand, max-age=600']) {
    requirement(
      R.storeUnderstoodPartialStatus,
      async () => {
        const path = `/partial/must-understand/${cacheControl.includes('no-store') ? 'no-store' : 'plain'}`;
        await exchange(f, path, { status: 418, headers: { 'cache-control': cacheControl }, body: 'teapot' }, [
          { status: 418, xCache: 'BYPASS' },
          { status: 418, xCache: 'BYPASS', originRequests: 2 },
        ]);
      },
      `418 with ${cacheControl}: not stored`,
    );
  }

  const authorizationCases: { cacheControl: string; stored: boolean }[] = [
    { cacheControl: 'max-age=600', stored: false },
    { cacheControl: 'public, max-age=600', stored: true },
    { cacheControl: 's-maxage=600', stored: true },
    { cacheControl: 'max-age=600, must-revalidate', stored: true },
  ];
  authorizationCases.forEach((c, i) => {
    requirement(
      R.storeAuthorization,
      async () => {
        const path = `/authorization/${i}`;
        const headers = { authorization: 'Bearer token-1' };
        await exchange(f, path, { headers: { 'cache-control': c.cacheControl }, body: 'for authorised eyes' }, [
          { headers, xCache: c.stored ? 'MISS' : 'BYPASS' },
          { headers, xCache: c.stored ? 'HIT' : 'BYPASS', originRequests: c.stored ? 1 : 2 },
        ]);
        assert.equal(f.originRequests(path)[0]?.headers.authorization, 'Bearer token-1');
      },
      `"${c.cacheControl}" is ${c.stored ? '' : 'not '}stored`,
    );
  });

  requirement(R.authorizationReuse, async () => {
    // Not stored, so another client (without credentials) never gets the authorised answer.
    await exchange(f, '/authorization/reuse/plain', (request) => ({ headers: { 'cache-control': 'max-age=600' }, body: request.headers.authorization ?? 'anonymous' }), [
      { headers: { authorization: 'Bearer alice' }, answerBody: 'Bearer alice' },
      { answerBody: 'anonymous', xCache: 'MISS', originRequests: 2 },
    ]);
    // Stored under s-maxage, and then served under s-maxage's rules: validated once stale, max-stale or not.
    await exchange(
      f,
      '/authorization/reuse/s-maxage',
      (request) => (request.headers['if-none-match'] === '"a"' ? { status: 304, headers: { etag: '"a"', 'cache-control': 's-maxage=10' } } : { headers: { etag: '"a"', 'cache-control': 's-maxage=10' }, body: 'shared' }),
      [
        { headers: { authorization: 'Bearer alice' }, xCache: 'MISS' },
        { answerBody: 'shared', xCache: 'HIT', originRequests: 1 },
        { advanceMs: 20_000, headers: { 'cache-control': 'max-stale=600' }, answerBody: 'shared', xCache: 'REVALIDATED', originRequests: 2 },
      ],
    );
  });

  requirement(R.storeAllFields, async () => {
    await exchange(f, '/fields/all', { headers: { 'cache-control': 'max-age=600', 'x-brand-new-field': 'kept', link: ['</a.css>; rel=preload', '</b.js>; rel=preload'] }, body: 'fields' }, [
      { xCache: 'MISS' },
      { xCache: 'HIT', fields: { 'x-brand-new-field': 'kept', link: '</a.css>; rel=preload, </b.js>; rel=preload', 'cache-control': 'max-age=600' } },
    ]);
  });

  requirement(R.storeNoProxyFields, async () => {
    await exchange(
      f,
      '/fields/proxy',
      { headers: { 'cache-control': 'max-age=600', 'proxy-authenticate': 'Basic realm="p"', 'proxy-authentication-info': 'nextnonce="n"', 'x-kept': 'yes' }, body: 'proxied' },
      [
        { xCache: 'MISS' },
        { xCache: 'HIT', fields: { 'proxy-authenticate': undefined, 'proxy-authentication-info': undefined, 'x-kept': 'yes' } },
      ],
    );
  });

  requirement(R.storeNoTrailers, async () => {
    await exchange(f, '/fields/trailers', { headers: { 'cache-control': 'max-age=600' }, body: 'with a trailer', trailers: { 'x-checksum': 'abc' } }, [
      { xCache: 'MISS', answerBody: 'with a trailer', fields: { 'x-checksum': undefined } },
      { xCache: 'HIT', answerBody: 'with a trailer', fields: { 'x-checksum': undefined, 'content-length': '14' } },
    ]);
  });

  /** The origin cuts its first answer after 5 bytes of 20, then answers whole. */
  function cutOnce(path: string): void {
    f.on(path, (_request, count) =>
      count === 0 ? { headers: { 'cache-control': 'max-age=600' }, body: '0123456789abcdefghij', cutAfterBytes: 5 } : { headers: { 'cache-control': 'max-age=600' }, body: '0123456789abcdefghij' },
    );
  }

  requirement(R.incompleteNotStored, async () => {
    cutOnce('/incomplete/stored');
    await assert.rejects(f.get('/incomplete/stored'), 'the client of the cut answer sees it fail');
    await exchange(f, '/incomplete/stored', undefined, [
      { xCache: 'MISS', answerBody: '0123456789abcdefghij', originRequests: 2 },
      { xCache: 'HIT', answerBody: '0123456789abcdefghij', originRequests: 2 },
    ]);
  });

  requirement(R.incompleteNotUsed, async () => {
    cutOnce('/incomplete/used');
    // Several clients at once: whoever waited on the cut fill is not answered from a part of it.
    const answers = await Promise.all([1, 2, 3].map(() => f.get('/incomplete/used').then((answer) => answer.body, () => 'failed')));
    for (const body of answers) assert.ok(body === 'failed' || body === '0123456789abcdefghij', `got ${body}`);
    assert.equal((await f.get('/incomplete/used')).body, '0123456789abcdefghij');
  });

  requirement(R.partialMarked206, async () => {
    cutOnce('/incomplete/marked');
    // The cut answer is never a clean 200 with part of the body: its connection fails.
    await assert.rejects(f.get('/incomplete/marked'));
    await f.get('/incomplete/marked');
    await exchange(f, '/incomplete/marked', undefined, [
      { headers: { range: 'bytes=0-3' }, status: 206, answerBody: '0123', fields: { 'content-range': 'bytes 0-3/20' } },
    ]);
  });

  test('svc: Set-Cookie is relayed, and the response not stored (docs/http-caching.md)', async () => {
    await exchange(f, '/cookie/plain', { headers: { 'cache-control': 'max-age=600', 'set-cookie': 'session=abc' }, body: 'cookie' }, [
      { xCache: 'BYPASS', fields: { 'set-cookie': 'session=abc' } },
      { xCache: 'BYPASS', fields: { 'set-cookie': 'session=abc' }, originRequests: 2 },
    ]);
  });

  requirement(
    R.privateFieldsNotStored,
    async () => {
      // The client whose request fetched the answer gets its cookie; nobody gets it from the stored copy.
      await exchange(f, '/cookie/named', { headers: { 'cache-control': 'private="set-cookie", max-age=600', 'set-cookie': 'session=abc' }, body: 'shared part' }, [
        { xCache: 'MISS', answerBody: 'shared part', fields: { 'set-cookie': 'session=abc' } },
        { xCache: 'HIT', answerBody: 'shared part', fields: { 'set-cookie': undefined }, originRequests: 1 },
      ]);
    },
    'private="set-cookie": the MISS carries Set-Cookie, the stored copy does not',
  );

  test('svc: HEAD on a miss fetches GET from the origin and stores it; a later GET is a HIT with the body', async () => {
    f.on('/head/first', { headers: { 'cache-control': 'max-age=600', 'x-kind': 'head' }, body: 'the body HEAD did not get' });
    const head = await f.get('/head/first', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal(header(head, 'x-kind'), 'head');
    assert.deepEqual(f.originRequests('/head/first').map((r) => r.method), ['GET']);
    const got = await f.get('/head/first');
    assert.equal(header(got, 'x-cache'), 'HIT');
    assert.equal(got.body, 'the body HEAD did not get');
  });

  test('svc: HEAD on a miss whose answer may not be stored is answered too (BYPASS)', async () => {
    f.on('/head/uncacheable', { headers: { 'cache-control': 'no-store', 'x-kind': 'bypass' }, body: 'x'.repeat(100_000) });
    const head = await f.get('/head/uncacheable', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(header(head, 'x-cache'), 'BYPASS');
    assert.equal(header(head, 'x-kind'), 'bypass');
    assert.equal(head.body, '');
  });
});
