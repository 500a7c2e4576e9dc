// RFC 9111 §4.1 through a real svc node: Vary selects a stored variant by the normalised request
// fields it names, `Vary: *` is never served from cache, the most recent variant wins, and a key holds
// at most 64 variants.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { header } from '../support/http.js';
import { metricValue, startCachingFixture, type CachingFixture } from '../support/caching-fixture.js';
import { eventually } from '../support/eventually.js';
import { exchange } from './exchanges.js';
import { R, requirement } from './rfc-requirements.js';
import { overH2 } from '../support/test-protocol.js';

interface VaryCase {
  name: string;
  vary: string;
  field: string;
  /** The value stored first, and the value of the request under test (undefined: field absent). */
  stored: string | undefined;
  asked: string | undefined;
  sameVariant: boolean;
}

const cases: VaryCase[] = [
  { name: 'Accept-Encoding: order, case and spaces do not matter', vary: 'Accept-Encoding', field: 'accept-encoding', stored: 'gzip, br', asked: 'BR,gzip', sameVariant: true },
  { name: 'Accept-Encoding: duplicates do not matter', vary: 'Accept-Encoding', field: 'accept-encoding', stored: 'gzip', asked: 'gzip, gzip', sameVariant: true },
  { name: 'Accept-Encoding: another coding is another variant', vary: 'Accept-Encoding', field: 'accept-encoding', stored: 'gzip', asked: 'identity', sameVariant: false },
  { name: 'Accept-Language: case and spaces do not matter', vary: 'Accept-Language', field: 'accept-language', stored: 'en-US, fr;q=0.5', asked: 'EN-us,fr;q=0.5', sameVariant: true },
  { name: 'Accept-Language: order matters', vary: 'Accept-Language', field: 'accept-language', stored: 'en, fr', asked: 'fr, en', sameVariant: false },
  { name: 'a Vary field name is case-insensitive', vary: 'X-Tenant', field: 'x-tenant', stored: 'a', asked: 'a', sameVariant: true },
  { name: 'other fields: runs of whitespace are collapsed', vary: 'X-Tenant', field: 'x-tenant', stored: 'blue  team', asked: 'blue team', sameVariant: true },
  { name: 'an absent field is another variant than a present one', vary: 'X-Tenant', field: 'x-tenant', stored: undefined, asked: 'a', sameVariant: false },
];

describe('RFC 9111 §4.1 Vary through svc', { timeout: 60_000 }, () => {
  let f: CachingFixture;
  before(async () => {
    f = await startCachingFixture();
  });
  after(() => f.close());

  cases.forEach((c, i) => {
    requirement(R.varyMatch, async () => {
      const path = `/vary/${i}`;
      f.on(path, (request) => ({
        headers: { 'cache-control': 'max-age=600', vary: c.vary },
        body: `variant for ${String(request.headers[c.field] ?? '(none)')}`,
      }));
      const fields = (value: string | undefined): Record<string, string> => (value === undefined ? {} : { [c.field]: value });
      const first = await f.get(path, { headers: fields(c.stored) });
      const asked = await f.get(path, { headers: fields(c.asked) });
      assert.equal(header(first, 'x-cache'), 'MISS');
      assert.equal(header(asked, 'x-cache'), c.sameVariant ? 'HIT' : 'MISS');
      assert.equal(asked.body, c.sameVariant ? first.body : `variant for ${c.asked ?? '(none)'}`);
      if (!c.sameVariant) {
        // Both variants are kept side by side.
        const again = await f.get(path, { headers: fields(c.stored) });
        assert.equal(header(again, 'x-cache'), 'HIT');
        assert.equal(again.body, first.body);
      }
    }, c.name);
  });

  // A field sent on several lines is one field, read the same way by every path: the data plane and
  // the background revalidation below, refresh and peer fetch. Cookie lines join with "; " (RFC 9113
  // §8.2.3), any other with ", " (RFC 9110 §5.3), even those Node's parsed headers keep the first of.
  const splitCases: { vary: string; lines: string[]; joined: Record<string, string> }[] = [
    { vary: 'Cookie', lines: ['cookie', 'a=1', 'cookie', 'b=2'], joined: { cookie: 'a=1; b=2' } },
    { vary: 'User-Agent', lines: ['user-agent', 'ua/1', 'user-agent', 'ua/2'], joined: { 'user-agent': 'ua/1, ua/2' } },
  ];
  for (const c of splitCases) {
    // node:http2 sends a User-Agent once, however many lines it is given.
    test(`${c.vary} on several lines selects one variant on every path`, { skip: overH2 && c.vary === 'User-Agent' && 'node:http2 sends one User-Agent line' }, async () => {
      const path = `/vary/lines/${c.vary}`;
      f.on(path, (_request, count) => ({
        headers: { 'cache-control': 'max-age=10, stale-while-revalidate=60', vary: c.vary },
        body: `version ${count}`,
      }));
      const first = await f.get(path, { headers: c.lines });
      assert.equal(header(first, 'x-cache'), 'MISS');
      const oneLine = await f.get(path, { headers: c.joined });
      assert.equal(header(oneLine, 'x-cache'), 'HIT');
      assert.equal(oneLine.body, 'version 0');

      // What the background revalidation fetches replaces the variant these clients select, rather
      // than landing beside it under a key no client asks for.
      f.svc.clock.advance(20_000);
      const stale = await f.get(path, { headers: c.lines });
      assert.equal(header(stale, 'x-cache'), 'STALE');
      const renewed = await eventually('the revalidated variant served', () => f.get(path, { headers: c.lines }), (answer) => answer.body === 'version 1');
      assert.equal(header(renewed, 'x-cache'), 'HIT');
      assert.equal(f.originRequests(path).length, 2);
    });
  }

  requirement(R.varyMatch, async () => {
    f.on('/vary/star', { headers: { 'cache-control': 'max-age=600', vary: '*' }, body: 'star' });
    const answers = [await f.get('/vary/star'), await f.get('/vary/star')];
    assert.deepEqual(answers.map((a) => header(a, 'x-cache')), ['BYPASS', 'BYPASS']);
    assert.equal(f.originRequests('/vary/star').length, 2);
  }, 'Vary: * never matches, so it is never served from cache');

  requirement(R.varyMostRecent, async () => {
    // The first answer omits Vary; the origin then starts varying on X-Lang. A request both match
    // gets the more recent one, which has a valid Vary.
    await exchange(f, '/vary/recent', (_request, count) => ({ headers: { 'cache-control': 'max-age=600', ...(count === 0 ? {} : { vary: 'X-Lang' }) }, body: `response ${count}` }), [
      { headers: { 'x-lang': 'fr' }, xCache: 'MISS', answerBody: 'response 0' },
      { headers: { 'x-lang': 'fr', 'cache-control': 'no-cache' }, answerBody: 'response 1', originRequests: 2 },
      { headers: { 'x-lang': 'fr' }, xCache: 'HIT', answerBody: 'response 1', originRequests: 2 },
    ]);
  });

  test('svc: a 65th variant is not stored (BYPASS), is counted in svc_vary_cap_hits_total, and still reaches the client', async () => {
    f.on('/vary/cap', (request) => ({
      headers: { 'cache-control': 'max-age=600', vary: 'X-Variant' },
      body: `variant ${String(request.headers['x-variant'])}`,
    }));
    const capHitsBefore = metricValue(await f.metrics(), 'svc_vary_cap_hits_total');
    for (let i = 0; i < 64; i++) {
      const answer = await f.get('/vary/cap', { headers: { 'x-variant': `v${i}` } });
      assert.equal(header(answer, 'x-cache'), 'MISS');
    }
    assert.equal(metricValue(await f.metrics(), 'svc_vary_cap_hits_total'), capHitsBefore);
    const overCap = await f.get('/vary/cap', { headers: { 'x-variant': 'v64' } });
    assert.equal(overCap.status, 200);
    assert.equal(overCap.body, 'variant v64');
    assert.equal(header(overCap, 'x-cache'), 'BYPASS', 'svc knew before the first byte that it would not store it');
    assert.equal(metricValue(await f.metrics(), 'svc_vary_cap_hits_total'), capHitsBefore + 1);
    const notStored = await f.get('/vary/cap', { headers: { 'x-variant': 'v64' } });
    assert.equal(header(notStored, 'x-cache'), 'BYPASS');
    assert.equal(notStored.body, 'variant v64');
    const kept = await f.get('/vary/cap', { headers: { 'x-variant': 'v0' } });
    assert.equal(header(kept, 'x-cache'), 'HIT');
    assert.equal(kept.body, 'variant v0');
    assert.equal(f.originRequests('/vary/cap').length, 66);
  });
});
