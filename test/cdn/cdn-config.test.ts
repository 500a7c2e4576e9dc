// The keys issue 18 adds to the cdn block: cdn.api_base_url (Cloudflare's by default; https, or plain
// http to loopback only, since every call carries the token) and the rule for cdn.api_token.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/index.js';
import { CDN_API_BASE_URL_PATTERN } from '../../src/config/address.js';

const minimal = { pools: [{ name: 'o', upstreams: ['http://127.0.0.1:1'] }], routes: [{ name: '', pool: 'o' }] };

describe('cdn.api_base_url', () => {
  test("defaults to Cloudflare's API", () => {
    assert.equal(parseConfig({ ...minimal, cdn: { zone_id: 'z' } }).cdn?.api_base_url, 'https://api.cloudflare.com/client/v4');
  });

  const cases: [string, boolean][] = [
    ['https://api.cloudflare.com/client/v4', true],
    ['https://purge.internal.example:8443/', true],
    ['http://127.0.0.1:8080/client/v4', true],
    ['http://localhost:9999', true],
    ['http://[::1]:9999', true],
    ['http://api.cloudflare.com/client/v4', false],
    ['http://10.0.0.1/client/v4', false],
    ['https://user:secret@api.cloudflare.com/client/v4', false],
    ['https://api.cloudflare.com/client/v4?token=x', false],
    ['https://api.cloudflare.com/client/v4#x', false],
    ['ftp://api.cloudflare.com', false],
  ];
  for (const [url, accepted] of cases) {
    test(`${accepted ? 'accepts' : 'rejects'} ${url}`, () => assert.equal(CDN_API_BASE_URL_PATTERN.test(url), accepted));
  }

  test('a rejected URL names the key and what was expected', () => {
    assert.throws(
      () => parseConfig({ ...minimal, cdn: { zone_id: 'z', api_base_url: 'http://cdn.example.com' } }),
      /cdn\.api_base_url: expected an https:\/\/ URL \(http:\/\/ only to a loopback address\) without user, query or fragment, got "http:\/\/cdn\.example\.com"/,
    );
  });
});

test('cdn.api_token takes visible ASCII only, and a bad one is described, not echoed', () => {
  assert.throws(
    () => parseConfig({ ...minimal, cdn: { zone_id: 'z', api_token: 'abc\r\nX-Injected: 1' } }),
    (error: Error) => {
      assert.match(error.message, /cdn\.api_token: expected a token of visible ASCII characters, got a string of 18 characters/);
      assert.ok(!error.message.includes('abc'));
      return true;
    },
  );
  assert.equal(parseConfig({ ...minimal, cdn: { zone_id: 'z', api_token: 'Ab-9_x.~+/=' } }).cdn?.api_token, 'Ab-9_x.~+/=');
});
