// The one test suite every CacheStore passes (DESIGN.md principle 5): the hot and the warm tier must
// be interchangeable behind the interface. Each implementation's test file calls
// cacheStoreConformance with a factory that opens a fresh store with the given byte bound, and the
// bytes that store counts for an entry (the warm tier counts entrySizeBytes, the hot tier its records).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { CacheEntry } from '../../src/cache/entry.js';
import { MAX_VARIANTS, type CacheStore } from '../../src/store/cache-store.js';
import { assertSameEntry, makeEntry } from './entry-fixture.js';

export interface StoreUnderTest {
  store: CacheStore;
  /** Closes the store and removes whatever it left behind. */
  cleanup: () => Promise<void>;
}

export type StoreFactory = (options: { maxBytes: number }) => Promise<StoreUnderTest>;

/** The bytes a store counts for an entry against its bound and in byteCount. */
export type SizeOf = (entry: CacheEntry) => number;

/** Large enough that nothing in the suite is evicted unless a test sets a smaller bound. */
const ROOMY_MAX_BYTES = 4 * 1024 * 1024;

async function withStore(
  makeStore: StoreFactory,
  maxBytes: number,
  run: (store: CacheStore) => Promise<void> | void,
): Promise<void> {
  const { store, cleanup } = await makeStore({ maxBytes });
  try {
    await run(store);
  } finally {
    await cleanup();
  }
}

type FourEntries = [CacheEntry, CacheEntry, CacheEntry, CacheEntry];

/**
 * A store with room for three equal entries, holding a, b and c (put in that order): putting d
 * then evicts whichever of them was used least recently, so a test can tell whether a read of one
 * counted as a use.
 */
async function withThreeOfFour(makeStore: StoreFactory, sizeOf: SizeOf, run: (store: CacheStore, entries: FourEntries) => void): Promise<void> {
  const body = (): Buffer => randomBytes(200);
  const size = sizeOf(makeEntry({ key: 'https://example.com/0', body: body() }));
  await withStore(makeStore, size * 3, (store) => {
    const entries = [0, 1, 2, 3].map((i) => makeEntry({ key: `https://example.com/${i}`, body: body() })) as FourEntries;
    for (const entry of entries.slice(0, 3)) assert.equal(store.put(entry), 'stored');
    run(store, entries);
  });
}

function expectedBytes(entries: Iterable<CacheEntry>, sizeOf: SizeOf): number {
  let total = 0;
  for (const entry of entries) total += sizeOf(entry);
  return total;
}

/** An entry of `key` whose size is the largest at most `limit` (or, `over`, the smallest above it). */
function sizedTo(key: string, limit: number, sizeOf: SizeOf, over: boolean): CacheEntry {
  const withBody = (bytes: number): CacheEntry => makeEntry({ key, body: randomBytes(bytes) });
  let bytes = Math.max(0, limit - sizeOf(withBody(0)) - 16);
  while (sizeOf(withBody(bytes + 1)) <= limit) bytes += 1;
  return withBody(over ? bytes + 1 : bytes);
}

export function cacheStoreConformance(name: string, makeStore: StoreFactory, sizeOf: SizeOf): void {
  describe(`CacheStore conformance: ${name}`, () => {
    test('an entry put is returned whole, body byte for byte', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store) => {
        // Every byte value, so no text encoding can pass unnoticed.
        const body = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
        const entry = makeEntry({ body });
        assert.equal(store.put(entry), 'stored');
        const [found, ...others] = store.variants(entry.key);
        assertSameEntry(found, entry);
        assert.equal(others.length, 0);
        assert.deepEqual(store.variants('https://example.com/unknown'), []);
        await store.flush();
        assertSameEntry(store.variants(entry.key)[0], entry);
      }));

    test('variants come most recently stored first; a replaced variant keeps one slot', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, (store) => {
        const gzip = makeEntry({ variantKey: 'gzip' });
        const br = makeEntry({ variantKey: 'br' });
        const identity = makeEntry({ variantKey: 'identity' });
        for (const entry of [gzip, br, identity]) assert.equal(store.put(entry), 'stored');
        assert.deepEqual(
          store.variants(gzip.key).map((entry) => entry.variantKey),
          ['identity', 'br', 'gzip'],
        );
        const newerGzip = makeEntry({ variantKey: 'gzip', body: randomBytes(100) });
        assert.equal(store.put(newerGzip), 'stored');
        const variants = store.variants(gzip.key);
        assert.deepEqual(
          variants.map((entry) => entry.variantKey),
          ['gzip', 'identity', 'br'],
        );
        assertSameEntry(variants[0], newerGzip);
        assert.equal(store.entryCount, 3);
      }));

    test('delete removes one variant or all of a key and says how many', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store) => {
        const a1 = makeEntry({ key: 'https://example.com/a', variantKey: '1' });
        const a2 = makeEntry({ key: 'https://example.com/a', variantKey: '2' });
        const a3 = makeEntry({ key: 'https://example.com/a', variantKey: '3' });
        const b = makeEntry({ key: 'https://example.com/b' });
        for (const entry of [a1, a2, a3, b]) store.put(entry);
        assert.equal(store.delete(a1.key, '2'), 1);
        assert.equal(store.delete(a1.key, '2'), 0);
        assert.deepEqual(
          store.variants(a1.key).map((entry) => entry.variantKey),
          ['3', '1'],
        );
        assert.equal(store.delete(a1.key), 2);
        assert.deepEqual(store.variants(a1.key), []);
        assert.equal(store.delete('https://example.com/none'), 0);
        assertSameEntry(store.variants(b.key)[0], b);
        assert.equal(store.entryCount, 1);
        await store.flush();
        assert.deepEqual(store.variants(a1.key), []);
        assertSameEntry(store.variants(b.key)[0], b);
      }));

    test(`a key keeps at most ${MAX_VARIANTS} variants; replacing one is still allowed`, () =>
      withStore(makeStore, ROOMY_MAX_BYTES, (store) => {
        const key = 'https://example.com/varied';
        for (let i = 0; i < MAX_VARIANTS; i += 1) {
          assert.equal(store.put(makeEntry({ key, variantKey: `v${i}` })), 'stored');
        }
        assert.equal(store.put(makeEntry({ key, variantKey: 'one-too-many' })), 'vary_cap');
        assert.equal(store.variants(key).length, MAX_VARIANTS);
        assert.ok(!store.variants(key).some((entry) => entry.variantKey === 'one-too-many'));
        const replacement = makeEntry({ key, variantKey: 'v7', body: randomBytes(10) });
        assert.equal(store.put(replacement), 'stored');
        assertSameEntry(store.variants(key)[0], replacement);
        assert.equal(store.entryCount, MAX_VARIANTS);
        assert.equal(store.put(makeEntry({ key: 'https://example.com/other' })), 'stored');
      }));

    test('an entry larger than the whole store is refused and evicts nothing', () =>
      withStore(makeStore, 2000, (store) => {
        const small = makeEntry({ key: 'https://example.com/small', body: randomBytes(100) });
        assert.equal(store.put(small), 'stored');
        const probe = makeEntry({ key: 'https://example.com/big', body: Buffer.alloc(0) });
        const exactFit = sizedTo(probe.key, 2000, sizeOf, false);
        assert.equal(sizeOf(exactFit), 2000);
        const tooLarge = sizedTo(probe.key, 2000, sizeOf, true);
        assert.equal(store.put(tooLarge), 'too_large');
        assert.deepEqual(store.variants(probe.key), []);
        assertSameEntry(store.variants(small.key)[0], small);
        assert.equal(store.put(exactFit), 'stored');
        assertSameEntry(store.variants(probe.key)[0], exactFit);
        assert.deepEqual(store.variants(small.key), []);
      }));

    test('byte and entry counts are exact after puts, replaces and deletes', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store) => {
        const live = new Map<string, CacheEntry>();
        const put = (entry: CacheEntry): void => {
          assert.equal(store.put(entry), 'stored');
          live.set(`${entry.key} ${entry.variantKey}`, entry);
        };
        for (let i = 0; i < 30; i += 1) {
          put(makeEntry({ key: `https://example.com/${i % 10}`, variantKey: `${i % 3}`, body: randomBytes(i * 7) }));
        }
        assert.equal(store.entryCount, live.size);
        assert.equal(store.byteCount, expectedBytes(live.values(), sizeOf));
        put(makeEntry({ key: 'https://example.com/3', variantKey: '0', body: randomBytes(999) }));
        store.delete('https://example.com/4');
        for (const id of [...live.keys()]) if (id.startsWith('https://example.com/4 ')) live.delete(id);
        store.delete('https://example.com/5', '1');
        live.delete('https://example.com/5 1');
        assert.equal(store.entryCount, live.size);
        assert.equal(store.byteCount, expectedBytes(live.values(), sizeOf));
        await store.flush();
        assert.equal(store.byteCount, expectedBytes(live.values(), sizeOf));
        for (const entry of live.values()) {
          const found = store.variants(entry.key).find((variant) => variant.variantKey === entry.variantKey);
          assertSameEntry(found, entry);
        }
      }));

    test('the least recently used entry is evicted first; a read counts as a use', () => {
      const body = (): Buffer => randomBytes(200);
      const size = sizeOf(makeEntry({ key: 'https://example.com/0', body: body() }));
      return withStore(makeStore, size * 3, (store) => {
        const [a, b, c, d] = [0, 1, 2, 3].map((i) => makeEntry({ key: `https://example.com/${i}`, body: body() }));
        for (const entry of [a, b, c]) assert.equal(store.put(entry as CacheEntry), 'stored');
        assert.equal(store.variants((a as CacheEntry).key).length, 1);
        assert.equal(store.put(d as CacheEntry), 'stored');
        assert.deepEqual(store.variants((b as CacheEntry).key), [], 'b was the least recently used');
        for (const kept of [a, c, d]) assertSameEntry(store.variants((kept as CacheEntry).key)[0], kept as CacheEntry);
        assert.equal(store.entryCount, 3);
        assert.ok(store.byteCount <= size * 3);
      });
    });

    test('peek lists what variants lists, without counting as a use', async () => {
      await withStore(makeStore, ROOMY_MAX_BYTES, (store) => {
        const key = 'https://example.com/peek';
        for (const variantKey of ['gzip', 'br', '']) assert.equal(store.put(makeEntry({ key, variantKey })), 'stored');
        const listed = (entries: CacheEntry[]): string[] => entries.map((entry) => entry.variantKey);
        assert.deepEqual(listed(store.peek(key)), ['', 'br', 'gzip']);
        assert.deepEqual(listed(store.peek(key)), listed(store.variants(key)));
      });
      await withThreeOfFour(makeStore, sizeOf, (store, [a, b, c, d]) => {
        assertSameEntry(store.peek(a.key)[0], a);
        assert.equal(store.put(d), 'stored');
        assert.deepEqual(store.variants(a.key), [], 'a was still the least recently used');
        for (const kept of [b, c, d]) assertSameEntry(store.variants(kept.key)[0], kept);
      });
    });

    test('has tells which variants are stored, without counting as a use', async () => {
      await withStore(makeStore, ROOMY_MAX_BYTES, (store) => {
        const key = 'https://example.com/has';
        for (const variantKey of ['gzip', '']) assert.equal(store.put(makeEntry({ key, variantKey })), 'stored');
        assert.deepEqual([store.has(key, 'gzip'), store.has(key, ''), store.has(key, 'br'), store.has(`${key}/other`, '')], [true, true, false, false]);
        assert.equal(store.delete(key, 'gzip'), 1);
        assert.deepEqual([store.has(key, 'gzip'), store.has(key, '')], [false, true]);
      });
      await withThreeOfFour(makeStore, sizeOf, (store, [a, , , d]) => {
        assert.equal(store.has(a.key, a.variantKey), true);
        assert.equal(store.put(d), 'stored');
        assert.equal(store.has(a.key, a.variantKey), false, 'a was still the least recently used');
      });
    });

    test('entries() visits every entry and tolerates deletes while iterating', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store) => {
        for (let i = 0; i < 20; i += 1) {
          store.put(makeEntry({ key: `https://example.com/${i % 8}`, variantKey: `${i}` }));
        }
        await store.flush();
        assert.equal([...store.entries()].length, 20);
        const visited: string[] = [];
        for (const entry of store.entries()) {
          visited.push(`${entry.key} ${entry.variantKey}`);
          // Delete the visited variant and a whole key that may not have been visited yet.
          store.delete(entry.key, entry.variantKey);
          store.delete('https://example.com/7');
        }
        assert.equal(new Set(visited).size, visited.length, 'no entry visited twice');
        // Key 7's two variants went with the first step; only one of them can have been visited.
        assert.ok(!visited.slice(1).some((id) => id.startsWith('https://example.com/7 ')));
        assert.ok(visited.length >= 18 && visited.length <= 20);
        assert.equal(store.entryCount, 0);
        assert.equal(store.byteCount, 0);
        assert.deepEqual([...store.entries()], []);
      }));

    test('summaries() gives what entries() gives, key, variant, fetch time and tags, and tolerates deletes', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store) => {
        for (let i = 0; i < 20; i += 1) {
          const entry = makeEntry({ key: `https://example.com/${i % 8}`, variantKey: `${i}` });
          store.put({ ...entry, requestTimeMs: entry.requestTimeMs + i, tags: i % 2 === 0 ? [`t${i}`, 'even'] : [] });
        }
        await store.flush();
        const summary = ({ key, variantKey, requestTimeMs, tags }: { key: string; variantKey: string; requestTimeMs: number; tags: readonly string[] }) =>
          JSON.stringify([key, variantKey, requestTimeMs, tags]);
        assert.deepEqual([...store.summaries()].map(summary).sort(), [...store.entries()].map(summary).sort());
        assert.equal([...store.summaries()].length, 20);
        const visited: string[] = [];
        for (const entry of store.summaries()) {
          visited.push(`${entry.key} ${entry.variantKey}`);
          store.delete(entry.key, entry.variantKey);
          store.delete('https://example.com/7');
        }
        assert.equal(new Set(visited).size, visited.length, 'no entry visited twice');
        assert.ok(!visited.slice(1).some((id) => id.startsWith('https://example.com/7 ')));
        assert.deepEqual([...store.summaries()], []);
      }));

    test('after flush, many entries read back intact', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store) => {
        const entries = Array.from({ length: 200 }, (_, i) =>
          makeEntry({ key: `https://example.com/item/${i}`, body: randomBytes(1 + ((i * 37) % 3000)) }),
        );
        for (const entry of entries) assert.equal(store.put(entry), 'stored');
        await store.flush();
        for (const entry of entries) assertSameEntry(store.variants(entry.key)[0], entry);
        assert.equal(store.byteCount, expectedBytes(entries, sizeOf));
      }));
  });
}
