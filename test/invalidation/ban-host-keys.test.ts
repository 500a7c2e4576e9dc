// The per-host ban index (issue 14 item 6) looks hosts up by the `host[:port]` of a primary key, and
// the keys are built by the edge from validated parts (issue 14 item 2): lower-cased, the scheme's
// default port dropped, IPv6 literals in brackets. A ban naming one host literally must hide exactly
// what the data plane stored for that host, however the client spelled its Host field.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw, header } from '../support/http.js';

const TOKEN = 'test-admin-token-0123456789';

describe('literal host bans and the keys the edge builds', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;

  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=600' }, body: 'x' }));
    svc = await startSvc([origin.url], { config: { admin: { listen: '127.0.0.1:0', token: TOKEN } } });
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  const get = async (host: string): Promise<string | undefined> => header(await fetchRaw(`${svc.dataUrl}/page`, { headers: { host } }), 'x-cache');
  const ban = async (hostRegex: string): Promise<number> => {
    const answer = await fetchRaw(`${svc.adminUrl}/v1/ban`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ host_regex: hostRegex }),
    });
    assert.equal(answer.status, 200, answer.body);
    return (JSON.parse(answer.body) as { count: number }).count;
  };

  test('a ban of one host hides that host in any spelling, and no other port or host', async () => {
    for (const host of ['Shop.Example', 'shop.example:8080', '[::1]:8080', 'other.example']) {
      assert.equal(await get(host), 'MISS', host);
      assert.equal(await get(host), 'HIT', host);
    }

    assert.equal(await ban('^shop\\.example$'), 1, 'the entry stored for Shop.Example, not the one on port 8080');
    assert.equal(await get('SHOP.example:80'), 'MISS', 'the default port and the case do not make another host');
    assert.equal(await get('shop.example:8080'), 'HIT');

    assert.equal(await ban('^shop\\.example:8080$'), 1);
    assert.equal(await get('shop.example:8080'), 'MISS');

    assert.equal(await ban('^\\[::1\\]:8080$'), 1);
    assert.equal(await get('[::1]:8080'), 'MISS');
    assert.equal(await get('other.example'), 'HIT', 'no ban named it');
  });
});
