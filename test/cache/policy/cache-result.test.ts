import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { originAnswerResult, settledResult, type OriginAnswerFacts } from '../../../src/cache/policy/cache-result.js';

describe('X-Cache of an origin answer to a cache lookup (docs/http-caching.md)', () => {
  const plain: OriginAnswerFacts = { status: 200, storable: true, contentLength: '10', maxObjectBytes: 100, atVaryCap: false };
  const cases: [string, Partial<OriginAnswerFacts>, 'MISS' | 'BYPASS'][] = [
    ['storable: MISS', {}, 'MISS'],
    ['not storable: BYPASS', { storable: false }, 'BYPASS'],
    ['a Content-Length over max_object_bytes: BYPASS', { contentLength: '101' }, 'BYPASS'],
    ['a Content-Length of exactly max_object_bytes: MISS', { contentLength: '100' }, 'MISS'],
    ['no Content-Length: MISS until the body says otherwise', { contentLength: undefined }, 'MISS'],
    ['an unreadable Content-Length is not a known length: MISS', { contentLength: '1e9' }, 'MISS'],
    ['the key is at its variant cap: BYPASS', { atVaryCap: true }, 'BYPASS'],
    ['a 5xx, storable or not: MISS', { status: 503, storable: false }, 'MISS'],
    ['a large 5xx: MISS', { status: 500, contentLength: '1000' }, 'MISS'],
    ['a 4xx not storable: BYPASS', { status: 403, storable: false }, 'BYPASS'],
  ];
  for (const [name, facts, expected] of cases) {
    test(name, () => assert.equal(originAnswerResult({ ...plain, ...facts }), expected));
  }
  test('once the body ended: stored or failed is a MISS, not stored a BYPASS, a 5xx always a MISS', () => {
    assert.equal(settledResult(200, 'stored'), 'MISS');
    assert.equal(settledResult(200, 'failed'), 'MISS');
    assert.equal(settledResult(200, 'not_stored'), 'BYPASS');
    assert.equal(settledResult(502, 'not_stored'), 'MISS');
  });
});
