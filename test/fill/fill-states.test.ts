// A fill's life on its own (DESIGN principle 12): busy → complete | failed | pass, once, with a real
// hot store behind it and the invalidation sequence as its store gate. The source is a stream the test
// writes to, so every ending (whole, cut, too large, covered by an invalidation) is exact.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { CacheEntry } from '../../src/cache/entry.js';
import { TieredCache } from '../../src/store/tiered-cache.js';
import { createHotStore } from '../../src/store/hot-store.js';
import { buildEntry } from '../../src/fill/build-entry.js';
import { headersFromRaw } from '../../src/cache/policy/header-lookup.js';
import { compileBan } from '../../src/invalidation/ban.js';
import { InvalidationSequence } from '../../src/invalidation/invalidation-sequence.js';
import { FillLayer } from '../../src/fill/fill-layer.js';
import type { Fill, FillOpening } from '../../src/fill/fill.js';
import { eventually } from '../support/eventually.js';

const KEY = 'http://shop.example/item';
const MAX_OBJECT_BYTES = 1024;

interface Rig {
  cache: TieredCache;
  gate: InvalidationSequence;
  fills: FillLayer;
  /** Opens a fill on a storable 200 whose body the test writes to `body`. */
  open(options?: { announcedBytes?: number; tags?: string[] }): { fill: Fill; body: PassThrough };
}

function rig(): Rig {
  const hot = createHotStore({ maxBytes: 1_000_000, onEvict: () => undefined });
  const cache = new TieredCache(hot, undefined);
  const gate = new InvalidationSequence(4, 4);
  const fills = new FillLayer({ cache, gate, now: Date.now, maxObjectBytes: MAX_OBJECT_BYTES, writeIdleTimeoutMs: 60_000 });
  return {
    cache,
    gate,
    fills,
    open(options = {}) {
      const body = new PassThrough();
      const now = Date.now();
      const fields = ['cache-control', 'max-age=60', ...(options.tags ? ['surrogate-key', options.tags.join(' ')] : [])];
      const draft = buildEntry({
        key: KEY,
        requestHeaders: headersFromRaw([]),
        answer: { statusCode: 200, fields, requestTimeMs: now, responseTimeMs: now },
        route: 'main',
        policy: {},
        omitFields: [],
      });
      const opening: FillOpening = {
        kind: 'answer',
        head: {
          status: 200,
          fields: draft.clientFields,
          shareable: true,
          varyNames: [],
          variantKey: '',
          varyStar: false,
          tags: draft.described.tags,
          etag: undefined,
          lastModified: undefined,
          correctedInitialAgeMs: 0,
          responseTimeMs: now,
        },
        body,
        announcedBytes: options.announcedBytes,
        closeDelimited: false,
        complete: (whole: Buffer): CacheEntry => draft.complete(whole),
      };
      return { fill: fills.open(KEY, () => Promise.resolve(opening), true), body };
    },
  };
}

const stored = (cache: TieredCache): CacheEntry | undefined => cache.hot.peek(KEY)[0];

describe('a fill\'s states', () => {
  test('busy → complete: the whole body is stored, once', async () => {
    const { cache, open } = rig();
    const { fill, body } = open({ announcedBytes: 10 });
    assert.equal(fill.state, 'busy');
    body.end(Buffer.from('0123456789'));
    const result = await fill.result;
    assert.equal(fill.state, 'complete');
    assert.equal(result.state === 'complete' && result.stored, 'stored');
    assert.equal(stored(cache)?.body.toString(), '0123456789');
  });

  test('busy → failed: a body that ends before its length is not stored, and its readers are cut', async () => {
    const { cache, open } = rig();
    const { fill, body } = open({ announcedBytes: 10 });
    const reader = fill.claim();
    body.end(Buffer.from('01234'));
    assert.deepEqual(await fill.result, { state: 'failed', reason: 'body_incomplete' });
    assert.equal(fill.state, 'failed');
    assert.equal(reader.active, false);
    assert.equal(stored(cache), undefined);
  });

  test('busy → failed: a source that errors mid-body', async () => {
    const { cache, open } = rig();
    const { fill, body } = open();
    body.write(Buffer.from('0123'));
    body.destroy(new Error('origin reset'));
    assert.deepEqual(await fill.result, { state: 'failed', reason: 'body_incomplete' });
    assert.equal(stored(cache), undefined);
  });

  test('busy → pass: past max_object_bytes the body reaches its readers but is not stored, and nobody new joins', async () => {
    const { cache, fills, open } = rig();
    const { fill, body } = open();
    const reader = fill.claim();
    body.write(Buffer.alloc(MAX_OBJECT_BYTES + 1));
    await eventually('the fill passing', () => fill.state, (state) => state === 'pass');
    assert.equal(fill.joinable, false);
    assert.equal(await fills.join(KEY, headersFromRaw([])), undefined);
    // Its one reader is the fastest, so it is never cut for lag: the source waits for it.
    assert.equal(reader.active, true, 'a lone reader is not cut for lag');
    reader.release();
    body.end();
    assert.deepEqual(await fill.result, { state: 'pass', reason: 'too_large' });
    assert.equal(fill.state, 'pass', 'pass is final: the body ending changes nothing');
    assert.equal(stored(cache), undefined);
  });

  test('the store gate: a purge, a matching ban or a refresh after the fill started keeps it out of the cache', async () => {
    for (const invalidate of [
      (gate: InvalidationSequence) => gate.keyInvalidated(KEY),
      (gate: InvalidationSequence) => gate.banned(compileBan('b1', Date.now(), { surrogate_key: 'catalog' })),
      (gate: InvalidationSequence) => gate.banned(compileBan('b2', Date.now(), { path_regex: '^/item$' })),
    ]) {
      const { cache, gate, open } = rig();
      const { fill, body } = open({ tags: ['catalog'] });
      invalidate(gate);
      body.end(Buffer.from('old'));
      const result = await fill.result;
      assert.equal(result.state === 'complete' && result.stored, 'invalidated');
      assert.equal(stored(cache), undefined);
    }
  });

  test('the store gate lets through what an invalidation does not cover, and refuses once it cannot tell', async () => {
    const { cache, gate, open } = rig();
    const { fill, body } = open({ tags: ['catalog'] });
    gate.keyInvalidated('http://shop.example/other');
    gate.banned(compileBan('b3', Date.now(), { surrogate_key: 'news' }));
    body.end(Buffer.from('kept'));
    const result = await fill.result;
    assert.equal(result.state === 'complete' && result.stored, 'stored');
    assert.equal(stored(cache)?.body.toString(), 'kept');

    // Five more keys purged: the sequence keeps four, so what a fill marked before them is refused.
    const later = open();
    for (let i = 0; i < 5; i++) gate.keyInvalidated(`http://shop.example/k${i}`);
    later.body.end(Buffer.from('unsure'));
    const refused = await later.fill.result;
    assert.equal(refused.state === 'complete' && refused.stored, 'invalidated');
  });
});
