// RFC 9111 §5.2.2 through a real svc node: what the origin's response directives allow svc to store,
// to serve, and to serve stale, including must-revalidate's 504 when the origin cannot be reached.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { header } from '../support/http.js';
import { startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { exchange } from './exchanges.js';
import { R, requirement, type Requirement } from './rfc-requirements.js';

interface StorageCase {
  name: string;
  requirement?: Requirement;
  headers: Record<string, string>;
  /** X-Cache of the first and second request, one after the other. */
  xCache: [string, string];
  /** A field the first answer carries and the second (from the stored copy) must not. */
  onlyOnFirst?: string;
  /** A field both answers carry. */
  present?: string;
}

const storageCases: StorageCase[] = [
  { name: 'no-store: never stored', requirement: R.noStore, headers: { 'cache-control': 'no-store, max-age=600' }, xCache: ['BYPASS', 'BYPASS'] },
  { name: 'private: never stored by a shared cache', requirement: R.privateNotStored, headers: { 'cache-control': 'private, max-age=600' }, xCache: ['BYPASS', 'BYPASS'] },
  {
    name: 'private="x-user": stored without the field it names, which its own client still gets',
    requirement: R.privateFieldsNotStored,
    headers: { 'cache-control': 'private="x-user", max-age=600', 'x-user': 'alice', 'x-shared': 'yes' },
    xCache: ['MISS', 'HIT'],
    onlyOnFirst: 'x-user',
    present: 'x-shared',
  },
  {
    name: 'no-cache="x-secret": stored without the field it names, which its own client still gets; reused without validation',
    headers: { 'cache-control': 'no-cache="x-secret", max-age=600', 'x-secret': 's3cr3t', 'x-shared': 'yes' },
    xCache: ['MISS', 'HIT'],
    onlyOnFirst: 'x-secret',
    present: 'x-shared',
  },
  { name: 'public: stored like any cacheable response', headers: { 'cache-control': 'public, max-age=600' }, xCache: ['MISS', 'HIT'] },
  { name: 'immutable: fresh responses are hits as usual (RFC 8246)', headers: { 'cache-control': 'max-age=600, immutable' }, xCache: ['MISS', 'HIT'] },
  {
    name: 'must-understand with no-store: stored for a status svc understands',
    requirement: R.mustUnderstand,
    headers: { 'cache-control': 'must-understand, no-store, max-age=600' },
    xCache: ['MISS', 'HIT'],
  },
];

interface StaleCase {
  name: string;
  requirement?: Requirement;
  headers: Record<string, string>;
  /** Request fields of the request made once the entry is stale. */
  requestHeaders?: Record<string, string>;
  xCache: string;
  originRequests: number;
}

const staleCases: StaleCase[] = [
  {
    name: 'no-cache: every reuse is validated, even while fresh',
    requirement: R.noCacheValidates,
    headers: { 'cache-control': 'no-cache, max-age=600', etag: '"n"' },
    xCache: 'REVALIDATED',
    originRequests: 1,
  },
  {
    name: 'must-revalidate: a stale entry is validated before use (max-stale ignored)',
    requirement: R.mustRevalidateStale,
    headers: { 'cache-control': 'max-age=10, must-revalidate', etag: '"m"' },
    requestHeaders: { 'cache-control': 'max-stale=600' },
    xCache: 'REVALIDATED',
    originRequests: 1,
  },
  {
    name: 'proxy-revalidate: the same for a shared cache',
    requirement: R.proxyRevalidate,
    headers: { 'cache-control': 'max-age=10, proxy-revalidate', etag: '"p"' },
    requestHeaders: { 'cache-control': 'max-stale=600' },
    xCache: 'REVALIDATED',
    originRequests: 1,
  },
  {
    name: 's-maxage implies proxy-revalidate',
    requirement: R.sMaxageRevalidate,
    headers: { 'cache-control': 's-maxage=10', etag: '"s"' },
    requestHeaders: { 'cache-control': 'max-stale=600' },
    xCache: 'REVALIDATED',
    originRequests: 1,
  },
  {
    name: 'without must-revalidate, max-stale allows the stale entry',
    headers: { 'cache-control': 'max-age=10', etag: '"x"' },
    requestHeaders: { 'cache-control': 'max-stale=600' },
    xCache: 'STALE',
    originRequests: 0,
  },
];

describe('RFC 9111 §5.2.2 response directives through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  storageCases.forEach((c, i) => {
    const run = async (): Promise<void> => {
      const path = `/response-directive/store/${i}`;
      const stored = c.xCache[1] === 'HIT';
      const [first, second] = await exchange(f, path, { headers: c.headers, body: `stored ${i}` }, [
        { xCache: c.xCache[0] },
        { xCache: c.xCache[1], answerBody: `stored ${i}`, originRequests: stored ? 1 : 2 },
      ]);
      if (c.onlyOnFirst) {
        assert.equal(header(first!, c.onlyOnFirst), c.headers[c.onlyOnFirst], 'the client whose request fetched it gets the field');
        assert.equal(header(second!, c.onlyOnFirst), undefined, 'the stored copy does not have it');
      }
      if (c.present) assert.equal(header(second!, c.present), c.headers[c.present]);
    };
    if (c.requirement) requirement(c.requirement, run, c.name);
    else test(`svc: ${c.name}`, run);
  });

  staleCases.forEach((c, i) => {
    const run = async (): Promise<void> => {
      const path = `/response-directive/stale/${i}`;
      const etag = c.headers.etag!;
      f.on(path, (request) => (request.headers['if-none-match'] === etag ? { status: 304, headers: c.headers } : { headers: c.headers, body: `kept ${i}` }));
      await f.get(path);
      f.svc.clock.advance(20_000);
      const answer = await f.get(path, { headers: c.requestHeaders ?? {} });
      assert.equal(answer.status, 200);
      assert.equal(answer.body, `kept ${i}`);
      assert.equal(header(answer, 'x-cache'), c.xCache);
      assert.equal(f.originRequests(path).length - 1, c.originRequests);
    };
    if (c.requirement) requirement(c.requirement, run, c.name);
    else test(`svc: ${c.name}`, run);
  });

  requirement(
    R.noStore,
    async () => {
      // Clients asking at the same time each get an answer of their own: nothing of one reaches another.
      f.on('/response-directive/no-store/concurrent', (_request, count) => ({ headers: { 'cache-control': 'no-store' }, body: `answer ${count}`, delayMs: 100 }));
      const answers = await Promise.all([0, 1, 2].map(() => f.get('/response-directive/no-store/concurrent')));
      assert.deepEqual(answers.map((answer) => answer.body).sort(), ['answer 0', 'answer 1', 'answer 2']);
    },
    'concurrent requests never share a no-store answer',
  );

  requirement(R.noTransform, async () => {
    const body = gzipSync(Buffer.from('svc never transforms content '.repeat(50)));
    const headers = { 'cache-control': 'max-age=600, no-transform', 'content-encoding': 'gzip', 'content-type': 'text/plain; charset=utf-8' };
    const answers = await exchange(f, '/response-directive/no-transform', { headers, body }, [
      { xCache: 'MISS', fields: { 'content-encoding': 'gzip', 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) } },
      { xCache: 'HIT', fields: { 'content-encoding': 'gzip', 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) } },
      { headers: { 'accept-encoding': 'identity' }, xCache: 'HIT', fields: { 'content-encoding': 'gzip' } },
    ]);
    for (const answer of answers) assert.ok(answer.raw.equals(body), 'the bytes are the origin bytes');
  });

  test('svc: immutable does not stop a client no-cache from reaching the origin', async () => {
    f.on('/response-directive/immutable', (request) =>
      request.headers['if-none-match'] === '"i"'
        ? { status: 304, headers: { etag: '"i"', 'cache-control': 'max-age=600, immutable' } }
        : { headers: { etag: '"i"', 'cache-control': 'max-age=600, immutable' }, body: 'immutable' },
    );
    await f.get('/response-directive/immutable');
    const answer = await f.get('/response-directive/immutable', { headers: { 'cache-control': 'no-cache' } });
    assert.equal(header(answer, 'x-cache'), 'REVALIDATED');
    assert.equal(f.originRequests('/response-directive/immutable').length, 2);
  });
});

describe('must-revalidate when the origin cannot answer (§5.2.2.2)', { timeout: 60_000 }, () => {
  for (const failure of ['refused', 'timeout'] as const) {
    for (const directive of ['must-revalidate', 'proxy-revalidate', 's-maxage=10']) {
      requirement(
        R.mustRevalidateDisconnected,
        async () => {
          const f = await startCachingFixture({ responseTimeout: '300ms' });
          try {
            const cacheControl = directive.startsWith('s-maxage') ? directive : `max-age=10, ${directive}, stale-if-error=600`;
            f.on('/mr', { headers: { 'cache-control': cacheControl, etag: '"mr"' }, body: 'must not be served stale' });
            await f.get('/mr');
            f.svc.clock.advance(20_000);
            if (failure === 'refused') await f.origin.close();
            else f.on('/mr', { hang: true });
            const answer = await f.get('/mr');
            assert.equal(answer.status, 504);
            assert.notEqual(answer.body, 'must not be served stale');
          } finally {
            await f.close();
          }
        },
        `${directive}, origin ${failure}: 504, never the stale entry`,
      );
    }
  }

  requirement(R.mustRevalidate504, async () => {
    const f = await startCachingFixture();
    try {
      f.on('/mr504', { headers: { 'cache-control': 'max-age=10, must-revalidate', etag: '"m"' }, body: 'strict' });
      await f.get('/mr504');
      f.svc.clock.advance(20_000);
      // A refused connection would otherwise be a 502 (it is, for an entry without must-revalidate).
      await f.origin.close();
      assert.equal((await f.get('/mr504')).status, 504);
    } finally {
      await f.close();
    }
  });

  test('svc: without must-revalidate, stale_if_unreachable: 0 and no stale window, a refused origin is a 502', async () => {
    const f = await startCachingFixture({ config: { stale_if_unreachable: 0 } });
    try {
      f.on('/plain', { headers: { 'cache-control': 'max-age=10', etag: '"p"' }, body: 'plain' });
      await f.get('/plain');
      f.svc.clock.advance(20_000);
      await f.origin.close();
      assert.equal((await f.get('/plain')).status, 502);
    } finally {
      await f.close();
    }
  });
});
