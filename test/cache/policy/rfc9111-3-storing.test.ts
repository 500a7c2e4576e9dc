import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { requestDirectives } from '../../../src/cache/policy/request-directives.js';
import type { RouteCacheOptions } from '../../../src/cache/policy/route-cache-options.js';
import { canStore, type StoreReason } from '../../../src/cache/policy/storability.js';
import { effectiveCacheControl } from '../../../src/cache/policy/targeted-cache-control.js';
import { fields, httpDate, T0 } from './fixtures.js';
import { forwardedFields, storedFields } from '../../../src/cache/policy/stored-fields.js';

interface Case {
  name: string;
  method?: string;
  request?: Record<string, string>;
  status?: number;
  response: Record<string, string | string[]>;
  route?: RouteCacheOptions;
  store: boolean;
  reason: StoreReason;
  omitFields?: string[];
}

const LM = { 'last-modified': httpDate(T0 - 3_600_000), date: httpDate(T0) };

const cases: Case[] = [
  { name: 'max-age', response: { 'cache-control': 'max-age=60' }, store: true, reason: 'cacheable' },
  { name: 's-maxage', response: { 'cache-control': 's-maxage=60' }, store: true, reason: 'cacheable' },
  { name: 'Expires', response: { expires: httpDate(T0 + 60_000), date: httpDate(T0) }, store: true, reason: 'cacheable' },
  { name: 'public 200 without a lifetime but with a validator', response: { 'cache-control': 'public', etag: '"a"' }, store: true, reason: 'cacheable' },
  { name: 'public alone does not store a 302 without explicit freshness (issue 14)', status: 302, response: { 'cache-control': 'public', etag: '"a"' }, store: false, reason: 'not_cacheable' },
  { name: 'public alone does not store a 500 (issue 14)', status: 500, response: { 'cache-control': 'public', ...LM }, store: false, reason: 'not_cacheable' },
  { name: 'max_error_ttl 0 stores no 503 even with max-age', status: 503, response: { 'cache-control': 'max-age=60' }, route: { maxErrorTtlMs: 0 }, store: false, reason: 'not_cacheable' },
  { name: 'max_error_ttl 0 still stores a 404 with max-age', status: 404, response: { 'cache-control': 'max-age=60' }, route: { maxErrorTtlMs: 0 }, store: true, reason: 'cacheable' },
  { name: 'heuristically cacheable status with Last-Modified', status: 404, response: LM, store: true, reason: 'cacheable' },
  { name: '302 without explicit freshness', status: 302, response: LM, store: false, reason: 'not_cacheable' },
  { name: '500 without explicit freshness', status: 500, response: {}, store: false, reason: 'not_cacheable' },
  { name: '500 with max-age is stored (explicit freshness)', status: 500, response: { 'cache-control': 'max-age=5' }, store: true, reason: 'cacheable' },
  { name: 'POST', method: 'POST', response: { 'cache-control': 'max-age=60' }, store: false, reason: 'method' },
  { name: 'HEAD responses are not stored', method: 'HEAD', response: { 'cache-control': 'max-age=60' }, store: false, reason: 'method' },
  { name: '1xx', status: 103, response: { 'cache-control': 'max-age=60' }, store: false, reason: 'status_not_final' },
  { name: '206', status: 206, response: { 'cache-control': 'max-age=60' }, store: false, reason: 'partial_content' },
  { name: '304', status: 304, response: { 'cache-control': 'max-age=60' }, store: false, reason: 'not_modified' },
  { name: 'request no-store (§5.2.1.5)', request: { 'cache-control': 'no-store' }, response: { 'cache-control': 'max-age=60' }, store: false, reason: 'request_no_store' },
  { name: 'Vary: *', response: { 'cache-control': 'max-age=60', vary: 'accept, *' }, store: false, reason: 'vary_star' },
  { name: 'no-store', response: { 'cache-control': 'max-age=60, no-store' }, store: false, reason: 'no_store' },
  { name: 'must-understand with an understood status ignores no-store', response: { 'cache-control': 'max-age=60, no-store, must-understand' }, store: true, reason: 'cacheable' },
  { name: 'must-understand with an unknown status', status: 299, response: { 'cache-control': 'max-age=60, no-store, must-understand' }, store: false, reason: 'must_understand' },
  { name: 'private', response: { 'cache-control': 'max-age=60, private' }, store: false, reason: 'private' },
  { name: 'private="field" stores without the field', response: { 'cache-control': 'max-age=60, private="X-User"', 'x-user': 'u' }, store: true, reason: 'cacheable', omitFields: ['x-user'] },
  { name: 'no-cache="field" stores without the field', response: { 'cache-control': 'max-age=60, no-cache="x-a", private="x-b"' }, store: true, reason: 'cacheable', omitFields: ['x-b', 'x-a'] },
  { name: 'Authorization without permission (§3.5)', request: { authorization: 'Bearer t' }, response: { 'cache-control': 'max-age=60' }, store: false, reason: 'authorization' },
  { name: 'Authorization with public', request: { authorization: 'Bearer t' }, response: { 'cache-control': 'max-age=60, public' }, store: true, reason: 'cacheable' },
  { name: 'Authorization with must-revalidate', request: { authorization: 'Bearer t' }, response: { 'cache-control': 'max-age=60, must-revalidate' }, store: true, reason: 'cacheable' },
  { name: 'Authorization with s-maxage', request: { authorization: 'Bearer t' }, response: { 'cache-control': 's-maxage=60' }, store: true, reason: 'cacheable' },
  { name: 'Set-Cookie', response: { 'cache-control': 'max-age=60', 'set-cookie': ['a=1', 'b=2'] }, store: false, reason: 'set_cookie' },
  { name: 'Set-Cookie named by private="set-cookie"', response: { 'cache-control': 'max-age=60, private="set-cookie"', 'set-cookie': 'a=1' }, store: true, reason: 'cacheable', omitFields: ['set-cookie'] },
  { name: 'zero lifetime without a validator cannot be reused', response: { 'cache-control': 'max-age=0' }, store: false, reason: 'not_reusable' },
  { name: 'zero lifetime with an ETag', response: { 'cache-control': 'max-age=0', etag: '"v1"' }, store: true, reason: 'cacheable' },
  { name: 'zero lifetime with stale-while-revalidate', response: { 'cache-control': 'max-age=0, stale-while-revalidate=30' }, store: true, reason: 'cacheable' },
  { name: 'no-cache without a validator', response: { 'cache-control': 'max-age=60, no-cache' }, store: false, reason: 'not_reusable' },
  { name: 'no-cache with Last-Modified', response: { 'cache-control': 'no-cache', ...LM }, store: true, reason: 'cacheable' },
  { name: 'heuristic status without Last-Modified or validator', response: {}, store: false, reason: 'not_reusable' },
  { name: 'route stale-if-error makes a zero lifetime reusable', response: { 'cache-control': 'max-age=0' }, route: { staleIfErrorMs: 10_000 }, store: true, reason: 'cacheable' },
  { name: 'targeted field overrides Cache-Control private', response: { 'cdn-cache-control': 'max-age=60', 'cache-control': 'private' }, store: true, reason: 'cacheable' },
  { name: 'targeted no-store', response: { 'cdn-cache-control': 'no-store', 'cache-control': 'max-age=60' }, store: false, reason: 'no_store' },
  { name: 'ttl_override stores no-store', response: { 'cache-control': 'no-store' }, route: { ttlOverrideMs: 30_000 }, store: true, reason: 'ttl_override' },
  { name: 'ttl_override stores private', response: { 'cache-control': 'private' }, route: { ttlOverrideMs: 30_000 }, store: true, reason: 'ttl_override' },
  { name: 'ttl_override stores a response without freshness', response: {}, route: { ttlOverrideMs: 30_000 }, store: true, reason: 'ttl_override' },
  { name: 'ttl_override does not store a 503', status: 503, response: {}, route: { ttlOverrideMs: 30_000 }, store: false, reason: 'override_status' },
  { name: 'ttl_override keeps the Set-Cookie rule', response: { 'set-cookie': 'a=1' }, route: { ttlOverrideMs: 30_000 }, store: false, reason: 'set_cookie' },
  { name: 'ttl_override keeps the Authorization rule', request: { authorization: 'Basic x' }, response: {}, route: { ttlOverrideMs: 30_000 }, store: false, reason: 'authorization' },
  { name: 'ttl_override keeps Vary: *', response: { vary: '*' }, route: { ttlOverrideMs: 30_000 }, store: false, reason: 'vary_star' },
  { name: 'ttl_override keeps request no-store', request: { 'cache-control': 'no-store' }, response: {}, route: { ttlOverrideMs: 30_000 }, store: false, reason: 'request_no_store' },
];

describe('RFC 9111 §3 storing responses in a shared cache', () => {
  for (const c of cases) {
    test(c.name, () => {
      const requestHeaders = fields(c.request);
      const responseHeaders = fields(c.response);
      const decision = canStore(
        { method: c.method ?? 'GET', headers: requestHeaders, directives: requestDirectives(requestHeaders) },
        { status: c.status ?? 200, headers: responseHeaders, control: effectiveCacheControl(responseHeaders), responseTimeMs: T0 },
        c.route,
      );
      assert.equal(decision.reason, c.reason);
      assert.equal(decision.store, c.store);
      assert.deepEqual([...decision.omitFields], c.omitFields ?? []);
    });
  }
});

describe('RFC 9111 §3.1, §5.2.2.4, §5.2.2.7: the fields forwarded and the fields stored', () => {
  const origin = [
    'Content-Type', 'text/plain',
    'Age', '5',
    'Set-Cookie', 'a=1',
    'X-User', 'alice',
    'Surrogate-Key', 'k1',
    'Proxy-Authentication-Info', 'nextnonce="n"',
    'Link', '</a.css>; rel=preload',
    'Link', '</b.js>; rel=preload',
  ];
  test('the client that asked gets every field but Age and the surrogate-only ones', () => {
    assert.deepEqual(forwardedFields(origin), [
      'Content-Type', 'text/plain',
      'Set-Cookie', 'a=1',
      'X-User', 'alice',
      'Proxy-Authentication-Info', 'nextnonce="n"',
      'Link', '</a.css>; rel=preload',
      'Link', '</b.js>; rel=preload',
    ]);
  });
  test('the stored copy leaves out the named fields and the proxy fields too', () => {
    assert.deepEqual(storedFields(origin, ['set-cookie', 'x-user']), [
      'Content-Type', 'text/plain',
      'Link', '</a.css>; rel=preload',
      'Link', '</b.js>; rel=preload',
    ]);
  });
});
