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

test('parsed headers combine array values', () => {
  const lookup = headersFromIncoming({ 'set-cookie': ['a=1', 'b=2'], host: 'x' });
  assert.equal(lookup('set-cookie'), 'a=1, b=2');
  assert.equal(lookup('host'), 'x');
  assert.equal(lookup('age'), undefined);
});

test('firstRawValue finds the first line of a field', () => {
  assert.equal(firstRawValue(['Date', 'd1', 'date', 'd2'], 'date'), 'd1');
  assert.equal(firstRawValue(['Dates', 'x'], 'date'), undefined);
});
