// Issue 14 item 8: wrong admin tokens are limited per client address (429 with Retry-After, the
// right token included while limited), counted in a metric, and logged without the token.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { rawGet, sendRaw } from '../support/raw-http.js';
import { fetchRaw } from '../support/http.js';

const TOKEN = 'test-admin-token-0123456789';
const WRONG = 'wrong-token-guess-0000000000';

describe('admin wrong-token rate limit', () => {
  let svc: SvcUnderTest;
  before(async () => {
    svc = await startSvc(['http://127.0.0.1:9'], { frozenClock: true, config: { admin: { listen: '127.0.0.1:0', token: TOKEN, auth_failure_limit: 3, auth_failure_window: '1m' } } });
  });
  after(() => svc.stop());

  const check = (token: string, localAddress = '127.0.0.1') =>
    sendRaw(svc.adminUrl, rawGet('/v1/auth/check', ['Host: admin', `Authorization: Bearer ${token}`]), { untilResponse: true, localAddress });
  const metric = async (result: string) => {
    const line = (await fetchRaw(`${svc.adminUrl}/metrics`)).body.split('\n').find((l) => l.startsWith(`svc_admin_auth_failures_total{result="${result}"}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };

  test('past the limit an address gets 429 with Retry-After, even with the right token, until its window ends', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await check(WRONG)).status, 401);
    const limited = await check(WRONG);
    assert.equal(limited.status, 429);
    assert.equal((JSON.parse(limited.body) as { error: { code: string } }).error.code, 'too_many_auth_failures');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    assert.equal((await check(TOKEN)).status, 429, 'guessing right while limited gains nothing');

    assert.equal((await check(TOKEN, '127.0.0.2')).status, 200, 'another address is not limited');

    svc.clock.advance(60_000);
    assert.equal((await check(TOKEN)).status, 200, 'the window ended');
  });

  test('failures and refusals are counted; log lines name the address, never a token', async () => {
    assert.equal(await metric('invalid_token'), 3);
    assert.ok((await metric('rate_limited')) >= 2);
    const wrongLines = await svc.logs.filter('the failures logged', (line) => line.msg === 'wrong admin token', 3);
    assert.equal(wrongLines.length, 3);
    assert.match(String(wrongLines[0]!.remote), /^127\.0\.0\.1:\d+$/);
    assert.ok(!svc.logs.text.some((line) => line.includes(WRONG) || line.includes(TOKEN)));
    await svc.logs.find('the refusal logged', (line) => line.msg === 'rejected' && line.reason === 'auth_rate_limited');
  });
});
