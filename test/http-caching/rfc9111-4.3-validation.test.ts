// RFC 9111 §4.3 and §3.2 through a real svc node: revalidating a stale entry with its validators and
// combining the origin's 304 with it, and answering a client's own conditional request from the
// cache (RFC 9111 §4.3.2, RFC 9110 §13) without origin traffic.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import type { OriginReply } from '../support/test-origin.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { eventually } from '../support/eventually.js';
import { exchange } from './exchanges.js';
import { R, requirement, type Requirement } from './rfc-requirements.js';

const LAST_MODIFIED = 'Mon, 01 Jan 2024 00:00:00 GMT';

describe('RFC 9111 §4.3.1, §4.3.3, §4.3.4 and §3.2 revalidating through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  requirement(R.updateWithNotModified, async () => {
    f.on('/combine/etag', (request): OriginReply =>
      request.headers['if-none-match'] === '"v1"'
        ? { status: 304, headers: { etag: '"v1"', 'cache-control': 'max-age=100', 'x-version': '2' } }
        : { headers: { etag: '"v1"', 'cache-control': 'max-age=10', 'x-version': '1', 'content-type': 'text/plain' }, body: 'original body' },
    );
    await f.get('/combine/etag');
    const fields = { 'x-version': '2', 'cache-control': 'max-age=100', 'content-type': 'text/plain', 'content-length': '13' };
    await exchange(f, '/combine/etag', undefined, [
      { advanceMs: 20_000, xCache: 'REVALIDATED', answerBody: 'original body', fields },
      // The new lifetime (100 s) counts from the 304, and the stored response carries its fields.
      { advanceMs: 50_000, xCache: 'HIT', answerBody: 'original body', fields, originRequests: 2 },
    ]);
  });

  requirement(R.updateOmitOnlyForIntegrity, async () => {
    // Every field of the 304 updates the stored response except those the stored body's framing
    // depends on: a 304's Content-Length: 0 does not describe the stored body.
    await exchange(
      f,
      '/combine/integrity',
      (request): OriginReply =>
        request.headers['if-none-match'] === '"i"'
          ? { status: 304, headers: { etag: '"i"', 'cache-control': 'max-age=100', 'content-type': 'text/html', 'content-length': '0', expires: 'Thu, 01 Jan 2099 00:00:00 GMT' } }
          : { headers: { etag: '"i"', 'cache-control': 'max-age=10', 'content-type': 'text/plain' }, body: 'twelve bytes' },
      [
        { xCache: 'MISS' },
        { advanceMs: 20_000, xCache: 'REVALIDATED', answerBody: 'twelve bytes', fields: { 'content-type': 'text/html', 'content-length': '12', expires: 'Thu, 01 Jan 2099 00:00:00 GMT' } },
        { xCache: 'HIT', answerBody: 'twelve bytes', fields: { 'content-type': 'text/html', 'content-length': '12' } },
      ],
    );
  });

  requirement(R.validateWithEntityTag, async () => {
    await exchange(
      f,
      '/validators/etag',
      (request): OriginReply =>
        request.headers['if-none-match'] === '"v7"'
          ? { status: 304, headers: { etag: '"v7"', 'cache-control': 'max-age=600' } }
          : { headers: { etag: '"v7"', 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=10' }, body: 'validated' },
      [{ xCache: 'MISS' }, { advanceMs: 20_000, xCache: 'REVALIDATED', originRequests: 2 }],
    );
    assert.equal(f.originRequests('/validators/etag')[1]?.headers['if-none-match'], '"v7"');
  });

  requirement(R.validateWithLastModified, async () => {
    await exchange(
      f,
      '/validators/date',
      (request): OriginReply =>
        request.headers['if-modified-since'] === LAST_MODIFIED
          ? { status: 304, headers: { 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=100' } }
          : { headers: { 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=10' }, body: 'dated body' },
      [{ xCache: 'MISS' }, { advanceMs: 20_000, xCache: 'REVALIDATED', answerBody: 'dated body', originRequests: 2 }],
    );
    assert.equal(f.originRequests('/validators/date')[1]?.headers['if-modified-since'], LAST_MODIFIED);
  });

  requirement(R.fullResponseWins, async () => {
    await exchange(
      f,
      '/full',
      (_request, count): OriginReply => ({ headers: { etag: `"f${count}"`, 'cache-control': 'max-age=10' }, body: `version ${count}` }),
      [
        { xCache: 'MISS', answerBody: 'version 0' },
        { advanceMs: 20_000, xCache: 'MISS', answerBody: 'version 1', fields: { etag: '"f1"' } },
        { xCache: 'HIT', answerBody: 'version 1', originRequests: 2 },
      ],
    );
    assert.equal(f.originRequests('/full')[1]?.headers['if-none-match'], '"f0"', 'the second request was a validation');
  });

  requirement(R.notModifiedNoMatchNoUpdate, async () => {
    await exchange(
      f,
      '/combine/mismatch',
      (request, count): OriginReply => {
        if (request.headers['if-none-match'] !== undefined) return { status: 304, headers: { etag: '"other"', 'cache-control': 'max-age=100' } };
        return { headers: { etag: count === 0 ? '"old"' : '"new"', 'cache-control': 'max-age=10' }, body: count === 0 ? 'old body' : 'new body' };
      },
      [
        { xCache: 'MISS' },
        // The 304 describes nothing svc holds: svc asks again without conditions.
        { advanceMs: 20_000, xCache: 'MISS', answerBody: 'new body', originRequests: 3 },
      ],
    );
    assert.equal(f.originRequests('/combine/mismatch')[2]?.headers['if-none-match'], undefined);
  });

  requirement(R.notModifiedUpdates, async () => {
    await exchange(
      f,
      '/combine/selected',
      (request): OriginReply =>
        request.headers['if-modified-since'] === LAST_MODIFIED
          ? { status: 304, headers: { 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=100', 'x-updated': 'yes' } }
          : { headers: { 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=10', 'x-updated': 'no' }, body: 'selected' },
      [
        { xCache: 'MISS', fields: { 'x-updated': 'no' } },
        { advanceMs: 20_000, xCache: 'REVALIDATED', fields: { 'x-updated': 'yes' } },
        { advanceMs: 50_000, xCache: 'HIT', fields: { 'x-updated': 'yes' }, originRequests: 2 },
      ],
    );
  });

  test('svc: a 304 without any validator selects the one stored response it revalidates: no second fetch', async () => {
    await exchange(
      f,
      '/combine/bare',
      (request): OriginReply =>
        request.headers['if-none-match'] === '"b"'
          ? { status: 304, headers: { 'cache-control': 'max-age=100', 'x-refreshed': 'yes' } }
          : { headers: { etag: '"b"', 'cache-control': 'max-age=10' }, body: 'bare' },
      [
        { xCache: 'MISS' },
        { advanceMs: 20_000, xCache: 'REVALIDATED', answerBody: 'bare', fields: { etag: '"b"', 'x-refreshed': 'yes' }, originRequests: 2 },
        { advanceMs: 50_000, xCache: 'HIT', answerBody: 'bare', originRequests: 2 },
      ],
    );
  });

  test('svc: under stale-while-revalidate, a 304 without validators makes the entry fresh again', async () => {
    f.on('/combine/bare-swr', (request): OriginReply =>
      request.headers['if-modified-since'] === LAST_MODIFIED
        ? { status: 304, headers: { 'cache-control': 'max-age=100, stale-while-revalidate=60' } }
        : { headers: { 'last-modified': LAST_MODIFIED, 'cache-control': 'max-age=10, stale-while-revalidate=60' }, body: 'swr' },
    );
    await f.get('/combine/bare-swr');
    f.svc.clock.advance(20_000);
    assert.equal(header(await f.get('/combine/bare-swr'), 'x-cache'), 'STALE');
    await eventually('the entry to be fresh again', async () => header(await f.get('/combine/bare-swr'), 'x-cache'), (xCache) => xCache === 'HIT');
    assert.equal(f.originRequests('/combine/bare-swr').length, 2, 'one background revalidation, no refetch');
  });

  test('svc: a 304 that says no-store is served once and the entry dropped', async () => {
    await exchange(
      f,
      '/combine/no-store',
      (request): OriginReply =>
        request.headers['if-none-match'] === '"ns"'
          ? { status: 304, headers: { etag: '"ns"', 'cache-control': 'no-store' } }
          : { headers: { etag: '"ns"', 'cache-control': 'max-age=10' }, body: 'kept once' },
      [
        { xCache: 'MISS' },
        { advanceMs: 20_000, xCache: 'REVALIDATED', answerBody: 'kept once' },
        { xCache: 'MISS', originRequests: 3 },
      ],
    );
  });

  test('svc: the client of a revalidation gets the Set-Cookie of the 304; the stored copy does not keep it', async () => {
    await exchange(
      f,
      '/combine/cookie',
      (request): OriginReply =>
        request.headers['if-none-match'] === '"c"'
          ? { status: 304, headers: { etag: '"c"', 'cache-control': 'private="set-cookie", max-age=100', 'set-cookie': 'session=renewed' } }
          : { headers: { etag: '"c"', 'cache-control': 'private="set-cookie", max-age=10' }, body: 'cookie body' },
      [
        { xCache: 'MISS', fields: { 'set-cookie': undefined } },
        { advanceMs: 20_000, xCache: 'REVALIDATED', answerBody: 'cookie body', fields: { 'set-cookie': 'session=renewed' } },
        { xCache: 'HIT', answerBody: 'cookie body', fields: { 'set-cookie': undefined }, originRequests: 2 },
      ],
    );
  });

  test('svc: a 304 with a Set-Cookie not named in private reaches its client, and the entry is dropped', async () => {
    await exchange(
      f,
      '/combine/cookie-unnamed',
      (request): OriginReply =>
        request.headers['if-none-match'] === '"u"'
          ? { status: 304, headers: { etag: '"u"', 'cache-control': 'max-age=100', 'set-cookie': 'session=1', 'x-version': '2' } }
          : { headers: { etag: '"u"', 'cache-control': 'max-age=10', 'x-version': '1' }, body: 'unnamed' },
      [
        { xCache: 'MISS' },
        { advanceMs: 20_000, xCache: 'REVALIDATED', answerBody: 'unnamed', fields: { 'set-cookie': 'session=1', 'x-version': '2' } },
        { xCache: 'MISS', fields: { 'set-cookie': undefined }, originRequests: 3 },
      ],
    );
  });
});

interface ConditionalCase {
  name: string;
  requirement: Requirement;
  requestHeaders: Record<string, string>;
  status: number;
}

const conditionalCases: ConditionalCase[] = [
  { name: 'If-None-Match with the stored ETag: 304', requirement: R.evaluateClientConditions, requestHeaders: { 'if-none-match': '"c1"' }, status: 304 },
  { name: 'If-None-Match listing the stored ETag among others: 304', requirement: R.evaluateClientConditions, requestHeaders: { 'if-none-match': '"x", "c1"' }, status: 304 },
  { name: 'If-None-Match: *: 304', requirement: R.evaluateClientConditions, requestHeaders: { 'if-none-match': '*' }, status: 304 },
  { name: 'If-None-Match with another ETag: 200', requirement: R.evaluateClientConditions, requestHeaders: { 'if-none-match': '"other"' }, status: 200 },
  { name: 'If-Modified-Since at Last-Modified: 304', requirement: R.evaluateClientConditions, requestHeaders: { 'if-modified-since': LAST_MODIFIED }, status: 304 },
  { name: 'If-Modified-Since after Last-Modified: 304', requirement: R.evaluateClientConditions, requestHeaders: { 'if-modified-since': 'Tue, 02 Jan 2024 00:00:00 GMT' }, status: 304 },
  { name: 'If-Modified-Since before Last-Modified: 200', requirement: R.evaluateClientConditions, requestHeaders: { 'if-modified-since': 'Sun, 31 Dec 2023 00:00:00 GMT' }, status: 200 },
  { name: 'a weak form of the stored ETag matches: 304', requirement: R.ifNoneMatchWeak, requestHeaders: { 'if-none-match': 'W/"c1"' }, status: 304 },
  {
    name: 'If-None-Match that fails wins over an If-Modified-Since that would pass',
    requirement: R.modifiedSinceIgnoredWithNoneMatch,
    requestHeaders: { 'if-none-match': '"other"', 'if-modified-since': 'Tue, 02 Jan 2024 00:00:00 GMT' },
    status: 200,
  },
  { name: 'an If-Modified-Since that is no date is ignored: 200', requirement: R.modifiedSinceInvalidIgnored, requestHeaders: { 'if-modified-since': 'yesterday' }, status: 200 },
];

describe('client conditional requests answered by svc (RFC 9111 §4.3.2, RFC 9110 §13)', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
    f.on('/conditional', {
      headers: {
        etag: '"c1"',
        'last-modified': LAST_MODIFIED,
        'cache-control': 'max-age=600',
        expires: 'Thu, 01 Jan 2099 00:00:00 GMT',
        'content-location': '/conditional.txt',
        vary: 'Accept-Encoding',
        'content-type': 'text/plain',
        'x-extra': 'e',
      },
      body: 'conditional body',
    });
    await f.get('/conditional');
  });
  after(() => f.close());

  for (const c of conditionalCases) {
    requirement(
      c.requirement,
      async () => {
        const answer = await f.get('/conditional', { headers: c.requestHeaders });
        assert.equal(answer.status, c.status);
        assert.equal(header(answer, 'x-cache'), 'HIT');
        assert.equal(answer.body, c.status === 304 ? '' : 'conditional body');
        assert.equal(f.originRequests('/conditional').length, 1, 'no origin traffic');
      },
      c.name,
    );
  }

  requirement(R.notModifiedFields, async () => {
    const answer = await f.get('/conditional', { headers: { 'if-none-match': '"c1"' } });
    assert.equal(answer.status, 304);
    assert.equal(header(answer, 'etag'), '"c1"');
    assert.equal(header(answer, 'cache-control'), 'max-age=600');
    assert.equal(header(answer, 'expires'), 'Thu, 01 Jan 2099 00:00:00 GMT');
    assert.equal(header(answer, 'content-location'), '/conditional.txt');
    assert.equal(header(answer, 'vary'), 'Accept-Encoding');
    assert.ok(header(answer, 'date') !== undefined);
    assert.equal(header(answer, 'x-extra'), undefined, 'only the fields RFC 9110 §15.4.5 lists');
  });

  requirement(
    R.noOriginOnlyConditions,
    async () => {
      for (const [name, value] of [
        ['if-match', '"c1"'],
        ['if-unmodified-since', LAST_MODIFIED],
      ] as const) {
        const before = f.originRequests('/conditional').length;
        const answer = await f.get('/conditional', { headers: { [name]: value } });
        assert.equal(answer.status, 200);
        assert.equal(header(answer, 'x-cache'), 'BYPASS');
        assert.equal(f.originRequests('/conditional').length, before + 1);
        assert.equal(f.originRequests('/conditional').at(-1)?.headers[name], value, `${name} reached the origin`);
      }
    },
    'If-Match and If-Unmodified-Since go to the origin',
  );

  requirement(
    R.noOriginOnlyConditions,
    async () => {
      // Nothing stored for the URL: svc does not answer the condition itself from nothing.
      await exchange(f, '/conditional/none', { headers: { etag: '"n1"', 'cache-control': 'max-age=600' }, body: 'whole' }, [
        { headers: { 'if-none-match': '"n1"' }, status: 200, answerBody: 'whole', xCache: 'MISS' },
      ]);
    },
    'a conditional request for a URL svc has nothing stored of gets the whole answer',
  );

  requirement(R.modifiedSinceUsesDate, async () => {
    const answers = await exchange(f, '/conditional/dated', { headers: { 'cache-control': 'max-age=600' }, body: 'no last-modified' }, [{ xCache: 'MISS' }]);
    const date = header(answers[0]!, 'date')!;
    await exchange(f, '/conditional/dated', undefined, [
      { headers: { 'if-modified-since': date }, status: 304, xCache: 'HIT' },
      { headers: { 'if-modified-since': new Date(Date.parse(date) - 60_000).toUTCString() }, status: 200, xCache: 'HIT', originRequests: 1 },
    ]);
  });

  requirement(R.notModifiedForOthers200, async () => {
    // svc revalidates its stale entry for a client whose If-None-Match names another tag: the 304 is
    // for svc's tag, so the client gets the whole updated response.
    await exchange(
      f,
      '/conditional/others',
      (request): OriginReply =>
        request.headers['if-none-match'] === '"mine"'
          ? { status: 304, headers: { etag: '"mine"', 'cache-control': 'max-age=100' } }
          : { headers: { etag: '"mine"', 'cache-control': 'max-age=10' }, body: 'whole body' },
      [
        { xCache: 'MISS' },
        { advanceMs: 20_000, headers: { 'if-none-match': '"theirs"' }, status: 200, xCache: 'REVALIDATED', answerBody: 'whole body' },
        { advanceMs: 20_000, headers: { 'if-none-match': '"mine"' }, status: 304, xCache: 'HIT' },
      ],
    );
  });

  requirement(R.preconditionsOnlyFor2xx, async () => {
    await exchange(f, '/conditional/404', { status: 404, headers: { etag: '"gone"', 'cache-control': 'max-age=600' }, body: 'not here' }, [
      { status: 404, xCache: 'MISS' },
      { headers: { 'if-none-match': '"gone"' }, status: 404, xCache: 'HIT', answerBody: 'not here' },
    ]);
  });
});
