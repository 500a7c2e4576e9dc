import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { primaryKey, primaryKeyOfUrl } from '../../../src/cache/policy/cache-key.js';

describe('RFC 9111 §2 primary cache key', () => {
  const cases: [string, string, string, string][] = [
    ['HTTP', 'Example.COM', '/a?b=1', 'http://example.com/a?b=1'],
    ['http', 'example.com:80', '/', 'http://example.com/'],
    ['https', 'example.com:443', '/x', 'https://example.com/x'],
    ['http', 'example.com:443', '/x', 'http://example.com:443/x'],
    ['https', 'example.com:8443', '/x', 'https://example.com:8443/x'],
    ['http', 'example.com:', '/x', 'http://example.com/x'],
    ['http', '[::1]:80', '/x', 'http://[::1]/x'],
    ['http', '[::1]', '/x', 'http://[::1]/x'],
    ['http', 'example.com', '', 'http://example.com/'],
    ['http', 'example.com', '?q', 'http://example.com/?q'],
    ['http', 'example.com', '/a#frag', 'http://example.com/a'],
    ['http', 'example.com', '/A/%7e/../b', 'http://example.com/A/%7e/../b'],
  ];
  for (const [scheme, host, path, expected] of cases) {
    test(`${scheme} ${host} ${JSON.stringify(path)}`, () => assert.equal(primaryKey(scheme, host, path), expected));
  }
  test('from a parsed URL', () => {
    assert.equal(primaryKeyOfUrl(new URL('HTTPS://Example.com:443/p?q#f')), 'https://example.com/p?q');
  });
});
