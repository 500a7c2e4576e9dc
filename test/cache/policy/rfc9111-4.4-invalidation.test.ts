import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { invalidationTargets } from '../../../src/cache/policy/unsafe-invalidation.js';
import { parseAuthority } from '../../../src/http/authority.js';
import { fields } from './fixtures.js';

describe('RFC 9111 §4.4 invalidation after unsafe methods', () => {
  const target = { scheme: 'http', authority: parseAuthority('Example.com:80')!, pathAndQuery: '/items/1?x=1' } as const;
  const cases: [string, string, number, Record<string, string>, string[]][] = [
    ['GET never invalidates', 'GET', 200, {}, []],
    ['HEAD, OPTIONS and TRACE never invalidate', 'OPTIONS', 200, {}, []],
    ['POST 200 invalidates the target', 'POST', 200, {}, ['http://example.com/items/1?x=1']],
    ['PUT 204', 'PUT', 204, {}, ['http://example.com/items/1?x=1']],
    ['DELETE 302', 'DELETE', 302, {}, ['http://example.com/items/1?x=1']],
    ['an unknown method counts as unsafe', 'PURGEX', 200, {}, ['http://example.com/items/1?x=1']],
    ['an error response does not invalidate', 'POST', 500, {}, []],
    ['a 4xx does not invalidate', 'PATCH', 409, {}, []],
    ['a 1xx does not invalidate', 'POST', 100, {}, []],
    ['same-origin Location and Content-Location', 'POST', 201, { location: '/items/2', 'content-location': 'http://example.com/items/1/v' }, ['http://example.com/items/1?x=1', 'http://example.com/items/2', 'http://example.com/items/1/v']],
    ['a relative reference resolves against the target', 'POST', 201, { location: 'other' }, ['http://example.com/items/1?x=1', 'http://example.com/items/other']],
    ['another host is never invalidated', 'POST', 201, { location: 'http://evil.example/items/1' }, ['http://example.com/items/1?x=1']],
    ['another scheme is another origin', 'POST', 201, { location: 'https://example.com/items/2' }, ['http://example.com/items/1?x=1']],
    ['a duplicate of the target is listed once', 'POST', 200, { 'content-location': '/items/1?x=1' }, ['http://example.com/items/1?x=1']],
    ['an unparsable reference is skipped', 'POST', 200, { location: 'http://[bad' }, ['http://example.com/items/1?x=1']],
    ['the default port is the same origin', 'POST', 201, { location: 'http://EXAMPLE.com:80/items/3' }, ['http://example.com/items/1?x=1', 'http://example.com/items/3']],
    ['a path-absolute reference keeps its spelling', 'POST', 201, { location: '/items/./4' }, ['http://example.com/items/1?x=1', 'http://example.com/items/./4']],
    ['a network-path reference to another host', 'POST', 201, { location: '//evil.example/items/1' }, ['http://example.com/items/1?x=1']],
  ];
  for (const [name, method, status, headers, expected] of cases) {
    test(name, () => assert.deepEqual(invalidationTargets(method, status, target, fields(headers)), expected));
  }
});
