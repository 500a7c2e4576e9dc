import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CacheEntry } from '../../src/cache/entry.js';
import { MAX_VARIANTS } from '../../src/store/cache-store.js';
import { StoreError } from '../../src/store/errors.js';
import { createHotStore, hotEntryBytes, type HotStore } from '../../src/store/hot-store.js';
import { cacheStoreConformance, storeInspectionConformance, sweptStoreConformance, type StoreFactory } from './conformance.js';
import { makeEntry } from './entry-fixture.js';

// Memory: what is written is read at once, and nothing is left to close or remove.
const openHot: StoreFactory<HotStore> = async ({ maxBytes }) => ({ store: createHotStore({ maxBytes }), settled: async () => {}, cleanup: async () => {} });
cacheStoreConformance('hot', openHot, hotEntryBytes);
storeInspectionConformance('hot', openHot, hotEntryBytes);
sweptStoreConformance('hot', openHot);

describe('hot store', () => {
  test('eviction hands each evicted entry to onEvict, oldest first, and counts it', () => {
    const evicted: CacheEntry[] = [];
    const entries = [0, 1, 2, 3, 4].map((i) => makeEntry({ key: `https://example.com/${i}` }));
    const size = hotEntryBytes(entries[0] as CacheEntry);
    const store = createHotStore({ maxBytes: size * 3, onEvict: (entry) => evicted.push(entry) });
    for (const entry of entries) store.put(entry);
    assert.deepEqual(
      evicted.map((entry) => entry.key),
      entries.slice(0, 2).map((entry) => entry.key),
    );
    assert.equal(store.evictionCount, 2);
    assert.equal(store.entryCount, 3);
  });

  test('explicit deletes and replacements are not evictions', () => {
    const evicted: CacheEntry[] = [];
    const store = createHotStore({ maxBytes: 1_000_000, onEvict: (entry) => evicted.push(entry) });
    store.put(makeEntry({ key: 'https://example.com/a' }));
    store.put(makeEntry({ key: 'https://example.com/a' }));
    store.delete('https://example.com/a');
    assert.deepEqual(evicted, []);
    assert.equal(store.evictionCount, 0);
  });

  test('refused variants are counted in varyCapHits', () => {
    const store = createHotStore({ maxBytes: 1_000_000 });
    const key = 'https://example.com/v';
    for (let i = 0; i < MAX_VARIANTS + 3; i += 1) store.put(makeEntry({ key, variantKey: `${i}` }));
    assert.equal(store.varyCapHits, 3);
  });

  test('reading a key keeps all its variants from eviction', () => {
    const evicted: string[] = [];
    const size = hotEntryBytes(makeEntry({ key: 'https://example.com/x', variantKey: '1' }));
    const store = createHotStore({ maxBytes: size * 3, onEvict: (entry) => evicted.push(entry.key + entry.variantKey) });
    store.put(makeEntry({ key: 'https://example.com/x', variantKey: '1' }));
    store.put(makeEntry({ key: 'https://example.com/x', variantKey: '2' }));
    store.put(makeEntry({ key: 'https://example.com/y', variantKey: '1' }));
    store.variants('https://example.com/x');
    store.put(makeEntry({ key: 'https://example.com/z', variantKey: '1' }));
    assert.deepEqual(evicted, ['https://example.com/y1']);
  });

  test('a non-positive byte bound is a programmer error', () => {
    assert.throws(() => createHotStore({ maxBytes: 0 }), (error: unknown) => {
      return error instanceof StoreError && error.code === 'invalid_option';
    });
  });
});

describe('hot store beyond 4 GiB', () => {
  // Node's Buffer#write, once V8 has optimised its caller into a fast API call, ends the process
  // with a native assertion when the buffer extends more than 2^32 - 1 bytes past the offset: a hot
  // tier sized above 4 GiB, common on an edge host, crashed after some thousands of stores. The
  // memory is reserved, not touched: the test costs only the pages its records use.
  test('a 6 GiB hot tier stores and serves 50,000 entries with text fields and bodies', () => {
    const store = createHotStore({ maxBytes: 6 * 1024 ** 3 });
    const body = Buffer.from('body bytes');
    for (let i = 0; i < 50_000; i += 1) {
      assert.equal(store.put(makeEntry({ key: `https://example.com/ünïcode/${i}`, body })), 'stored');
    }
    const [served] = store.variants('https://example.com/ünïcode/49999');
    assert.equal(served?.key, 'https://example.com/ünïcode/49999');
    assert.equal(served?.body.toString(), 'body bytes');
    assert.equal(store.entryCount, 50_000);
  });
});
