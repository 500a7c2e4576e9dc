// RFC 9111 §2: the primary key is the target URI, built from parts the edge parsed. An operator's URL
// gives the key a client request for it is stored under (issue 15 item 5: dot segments, braces,
// percent-encoding and queries are kept as spelled, on both sides).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { keyOfUrl, keysOfUrl } from '../../../src/invalidation/url-key.js';

describe('RFC 9111 §2 primary cache key', () => {
  const cases: [string, string][] = [
    ['HTTP://Example.COM/a?b=1', 'http://example.com/a?b=1'],
    ['http://example.com:80/', 'http://example.com/'],
    ['https://example.com:443/x', 'https://example.com/x'],
    ['http://example.com:443/x', 'http://example.com:443/x'],
    ['https://example.com:8443/x', 'https://example.com:8443/x'],
    ['http://example.com:/x', 'http://example.com/x'],
    ['http://[::1]:80/x', 'http://[::1]/x'],
    ['http://[0:0::1]/x', 'http://[::1]/x'],
    ['http://example.com', 'http://example.com/'],
    ['http://example.com?q', 'http://example.com/?q'],
    ['http://example.com/a#frag', 'http://example.com/a'],
    ['http://example.com/A/%7e/../b', 'http://example.com/A/%7e/../b'],
    ['http://example.com/a/./b', 'http://example.com/a/./b'],
    ['http://example.com/p/{id}', 'http://example.com/p/{id}'],
    ['http://example.com/q?x=<1>&y="2"', 'http://example.com/q?x=<1>&y="2"'],
    ['http://example.com/caf\u00e9 au lait', 'http://example.com/caf%C3%A9%20au%20lait'],
  ];
  for (const [url, expected] of cases) {
    test(JSON.stringify(url), () => assert.equal(keyOfUrl(url), expected));
  }

  for (const url of [
    'ftp://example.com/a',
    'http://',
    'http:///a',
    'http://user:pass@example.com/a',
    'http://exa mple.com/a',
    'http://example.com:99999/a',
    'http://example.com:0/a',
    'http://shop.test%2fstatic/a',
    'http://a,b/a',
    'http://[::1/a',
    'http://[fe80::1%25eth0]/a',
    'http://[v1.x]/a',
    'example.com/a',
  ]) {
    test(`no key for ${JSON.stringify(url)}`, () => assert.equal(keyOfUrl(url), undefined));
  }

  test('a purge names both schemes, its own first', () => {
    assert.deepEqual(keysOfUrl('https://Shop.test/a'), ['https://shop.test/a', 'http://shop.test/a']);
    assert.deepEqual(keysOfUrl('http://shop.test:8080/a'), ['http://shop.test:8080/a', 'https://shop.test:8080/a']);
  });
});
