// Route matching (issue 2 item 4): the longest path_prefix wins, a route with a host beats one
// without at the same prefix, and hosts compare case-insensitively.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RouteTable, type RouteRule } from '../../src/proxy/route-table.js';

const rule = (name: string, path_prefix: string, host?: string): RouteRule => ({ name, match: { path_prefix, host }, pool: 'p' });

test('the most specific route answers: longest prefix first, then a route with a host', () => {
  const table = new RouteTable([rule('all', '/'), rule('api', '/api/'), rule('shop-api', '/api/', 'Shop.Example'), rule('v2', '/api/v2/')]);
  assert.equal(table.match('other.example', '/index.html')?.label, 'all');
  assert.equal(table.match('other.example', '/api/x')?.label, 'api');
  assert.equal(table.match('shop.example', '/api/x')?.label, 'shop-api', 'the configured host is compared lower-cased');
  assert.equal(table.match('shop.example', '/api/v2/x')?.label, 'v2', 'a longer prefix beats a host');
});

test('a request no route covers matches nothing', () => {
  const table = new RouteTable([rule('shop', '/', 'shop.example'), rule('', '/static/')]);
  assert.equal(table.match('other.example', '/index.html'), undefined);
  assert.equal(table.match('other.example', '/static/a.css')?.label, ':/static/', 'an unnamed route is labelled host:path_prefix');
});
