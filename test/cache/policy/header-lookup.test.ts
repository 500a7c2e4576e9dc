import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstRawValue, headersFromIncoming, headersFromRaw } from '../../../src/cache/policy/header-lookup.js';

test('raw lists are looked up case-insensitively and repeated lines combined (RFC 9110 §5.3)', () => {
  const lookup = headersFromRaw(['Cache-Control', 'max-age=5', 'VARY', 'Accept', 'cache-control', 'public', 'X-Empty', '']);
  assert.equal(lookup('cache-control'), 'max-age=5, public');
  assert.equal(lookup('vary'), 'Accept');
  assert.equal(lookup('x-empty'), '');
  assert.equal(lookup('etag'), undefined);
});

test('cookie lines join with "; " (RFC 9113 §8.2.3), other repeated lines with ", "', () => {
  const lookup = headersFromRaw(['Cookie', 'a=1', 'Accept', 'text/html', 'COOKIE', 'b=2', 'accept', '*/*']);
  assert.equal(lookup('cookie'), 'a=1; b=2');
  assert.equal(lookup('accept'), 'text/html, */*');
});

test('a raw name matches only when equal ignoring ASCII case', () => {
  const lookup = headersFromRaw(['X-Tenant-1', 'a', 'x-tenant-2', 'b', 'X_TENANT_1', 'c', 'RANGE', 'bytes=0-1']);
  assert.equal(lookup('x-tenant-1'), 'a');
  assert.equal(lookup('x-tenant-2'), 'b');
  assert.equal(lookup('x_tenant_1'), 'c');
  assert.equal(lookup('range'), 'bytes=0-1');
  assert.equal(lookup('rangf'), undefined);
  assert.equal(lookup('x-tenant-'), undefined);
});

test('parsed headers combine array values', () => {
  const lookup = headersFromIncoming({ 'set-cookie': ['a=1', 'b=2'], host: 'x' });
  assert.equal(lookup('set-cookie'), 'a=1, b=2');
  assert.equal(lookup('host'), 'x');
  assert.equal(lookup('age'), undefined);
});

test('firstRawValue finds the first line of a field', () => {
  assert.equal(firstRawValue(['Date', 'd1', 'date', 'd2'], 'date'), 'd1');
  assert.equal(firstRawValue(['Dates', 'x'], 'date'), undefined);
  assert.equal(firstRawValue(['X-Other', 'x', 'DATE', 'd3'], 'date'), 'd3');
});
