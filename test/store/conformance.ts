// The suites the stores pass (DESIGN.md principle 5), one per interface of src/store/cache-store.ts
// (docs/architecture.md "Store interfaces"): cacheStoreConformance for every CacheStore (the hot
// tier, the warm tier, and a data-plane worker's view of the warm tier), and the suite of each other
// interface for the stores that have it. Each implementation's test file calls them with a factory
// that opens a fresh store with the given byte bound, and the bytes that store counts for an entry
// (the warm tier counts entrySizeBytes, the hot tier its records).
//
// What is written settles where the store keeps it at its own pace: at once in memory, on disk after
// a flush, at a writer in another thread once that one has applied it and this store's reads were
// renewed. The factory's `settled` waits for that, and the CacheStore suite reads after it. The
// answers of a write are checked as the interface defines them, against what reads see at once: a
// put is `stored` (seen), refused as the store decided (not seen) or `sent` to a writer elsewhere
// (not seen yet); a delete returns how many variants reads stopped seeing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { CacheEntry } from '../../src/cache/entry.js';
import { MAX_VARIANTS, type CacheStore, type DemotionTarget, type DurableStore, type PutOutcome, type StoreInspection, type SweptStore } from '../../src/store/cache-store.js';
import { assertSameEntry, makeEntry, type EntryParts } from './entry-fixture.js';

export interface StoreUnderTest<S> {
  store: S;
  /** Resolves once what was written has settled where the store keeps it (see above). */
  settled: () => Promise<void>;
  /** Closes the store and removes whatever it left behind. */
  cleanup: () => Promise<void>;
}

export type StoreFactory<S> = (options: { maxBytes: number }) => Promise<StoreUnderTest<S>>;

/** The bytes a store counts for an entry against its bound and in byteCount. */
export type SizeOf = (entry: CacheEntry) => number;

/** Large enough that nothing in the suite is evicted unless a test sets a smaller bound. */
const ROOMY_MAX_BYTES = 4 * 1024 * 1024;

async function withStore<S>(
  makeStore: StoreFactory<S>,
  maxBytes: number,
  run: (store: S, settled: () => Promise<void>) => Promise<void> | void,
): Promise<void> {
  const { store, settled, cleanup } = await makeStore({ maxBytes });
  try {
    await run(store, settled);
  } finally {
    await cleanup();
  }
}

/**
 * An entry fetched `order` steps after the others: the cache stores entries as they are fetched, so
 * the most recently stored is the most recently fetched, which is the order the warm tier keeps on disk.
 */
function fetchedAt(order: number, parts: EntryParts = {}): CacheEntry {
  const entry = makeEntry(parts);
  return { ...entry, requestTimeMs: entry.requestTimeMs + order };
}

function sameVariant(a: CacheEntry, b: CacheEntry): boolean {
  return a.key === b.key && a.variantKey === b.variantKey && a.body.equals(b.body);
}

/**
 * Puts `entry` and checks the answer against what reads see at once: a stored entry is there; one
 * refused, or sent to a writer elsewhere, is not (yet). `decided` is what a store that decides itself
 * answers; a store whose writer is another thread answers `sent` instead.
 */
function putAs(store: CacheStore, entry: CacheEntry, decided: PutOutcome): void {
  const outcome = store.put(entry);
  assert.ok(outcome === decided || outcome === 'sent', `put answered ${outcome}, not ${decided} (nor sent)`);
  assert.equal(
    store.peek(entry.key).some((stored) => sameVariant(stored, entry)),
    outcome === 'stored',
    `put answered ${outcome}: reads see the entry at once only when it was stored`,
  );
}

/** Deletes and checks the answer: how many variants of `key` reads stopped seeing. */
function deleteCounted(store: CacheStore, key: string, variantKey?: string): number {
  const before = store.peek(key).length;
  const removed = store.delete(key, variantKey);
  assert.equal(removed, before - store.peek(key).length, `delete(${key}, ${variantKey}) answered ${removed}`);
  return removed;
}

const variantKeys = (entries: readonly CacheEntry[]): string[] => entries.map((entry) => entry.variantKey);

type FourEntries = [CacheEntry, CacheEntry, CacheEntry, CacheEntry];

/**
 * A store with room for three equal entries, holding a, b and c (put in that order): putting d
 * then evicts whichever of them was used least recently, so a test can tell whether a read of one
 * counted as a use.
 */
async function withThreeOfFour<S extends CacheStore>(
  makeStore: StoreFactory<S>,
  sizeOf: SizeOf,
  run: (store: S, entries: FourEntries) => void,
): Promise<void> {
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

/** Puts 20 variants of 8 keys, each fetched at its own time, half of them tagged; returns them. */
function putTwenty(store: CacheStore): CacheEntry[] {
  const put: CacheEntry[] = [];
  for (let i = 0; i < 20; i += 1) {
    const entry = { ...fetchedAt(i, { key: `https://example.com/${i % 8}`, variantKey: `${i}` }), tags: i % 2 === 0 ? [`t${i}`, 'even'] : [] };
    assert.equal(store.put(entry), 'stored');
    put.push(entry);
  }
  return put;
}

/**
 * Walks `walk()`, deleting each variant visited and, at the first step, all of key 7 (which may not
 * have been visited yet): nothing is visited twice, and key 7's variants not at all after that step.
 */
function walkDeleting(store: CacheStore, walk: () => Iterable<{ key: string; variantKey: string }>): void {
  const visited: string[] = [];
  for (const entry of walk()) {
    visited.push(`${entry.key} ${entry.variantKey}`);
    store.delete(entry.key, entry.variantKey);
    store.delete('https://example.com/7');
  }
  assert.equal(new Set(visited).size, visited.length, 'no entry visited twice');
  // Key 7's two variants went with the first step; only one of them can have been visited.
  assert.ok(!visited.slice(1).some((id) => id.startsWith('https://example.com/7 ')));
  assert.ok(visited.length >= 18 && visited.length <= 20);
  assert.deepEqual([...walk()], []);
}

/** What every CacheStore does: look up, store, delete. */
export function cacheStoreConformance(name: string, makeStore: StoreFactory<CacheStore>, sizeOf: SizeOf): void {
  describe(`CacheStore conformance: ${name}`, () => {
    test('an entry put is returned whole, body byte for byte', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        // Every byte value, so no text encoding can pass unnoticed.
        const body = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
        const entry = makeEntry({ body });
        putAs(store, entry, 'stored');
        await settled();
        const [found, ...others] = store.variants(entry.key);
        assertSameEntry(found, entry);
        assert.equal(others.length, 0);
        assert.deepEqual(store.variants('https://example.com/unknown'), []);
      }));

    test('variants come most recently stored first; a replaced variant keeps one slot', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const [gzip, br, identity] = ['gzip', 'br', 'identity'].map((variantKey, i) => fetchedAt(i, { variantKey })) as [CacheEntry, CacheEntry, CacheEntry];
        for (const entry of [gzip, br, identity]) putAs(store, entry, 'stored');
        await settled();
        assert.deepEqual(variantKeys(store.variants(gzip.key)), ['identity', 'br', 'gzip']);
        const newerGzip = fetchedAt(3, { variantKey: 'gzip', body: randomBytes(100) });
        putAs(store, newerGzip, 'stored');
        await settled();
        const variants = store.variants(gzip.key);
        assert.deepEqual(variantKeys(variants), ['gzip', 'identity', 'br']);
        assertSameEntry(variants[0], newerGzip);
      }));

    test('delete removes one variant or all of a key and says how many reads stopped seeing', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const [a1, a2, a3] = ['1', '2', '3'].map((variantKey, i) => fetchedAt(i, { key: 'https://example.com/a', variantKey })) as [CacheEntry, CacheEntry, CacheEntry];
        const b = makeEntry({ key: 'https://example.com/b' });
        for (const entry of [a1, a2, a3, b]) putAs(store, entry, 'stored');
        await settled();
        deleteCounted(store, a1.key, '2');
        await settled();
        assert.deepEqual(variantKeys(store.variants(a1.key)), ['3', '1']);
        assert.equal(deleteCounted(store, a1.key, '2'), 0);
        deleteCounted(store, a1.key);
        await settled();
        assert.deepEqual(store.variants(a1.key), []);
        assert.equal(deleteCounted(store, 'https://example.com/none'), 0);
        assertSameEntry(store.variants(b.key)[0], b);
      }));

    test(`a key keeps at most ${MAX_VARIANTS} variants; replacing one is still allowed`, () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const key = 'https://example.com/varied';
        for (let i = 0; i < MAX_VARIANTS; i += 1) putAs(store, fetchedAt(i, { key, variantKey: `v${i}` }), 'stored');
        await settled();
        putAs(store, fetchedAt(MAX_VARIANTS, { key, variantKey: 'one-too-many' }), 'vary_cap');
        await settled();
        assert.equal(store.variants(key).length, MAX_VARIANTS);
        assert.ok(!store.variants(key).some((entry) => entry.variantKey === 'one-too-many'));
        const replacement = fetchedAt(MAX_VARIANTS + 1, { key, variantKey: 'v7', body: randomBytes(10) });
        putAs(store, replacement, 'stored');
        putAs(store, makeEntry({ key: 'https://example.com/other' }), 'stored');
        await settled();
        assertSameEntry(store.variants(key)[0], replacement);
        assert.equal(store.variants(key).length, MAX_VARIANTS);
      }));

    test('an entry larger than the whole store is refused and evicts nothing', () =>
      withStore(makeStore, 2000, async (store, settled) => {
        const small = makeEntry({ key: 'https://example.com/small', body: randomBytes(100) });
        putAs(store, small, 'stored');
        await settled();
        const probe = makeEntry({ key: 'https://example.com/big', body: Buffer.alloc(0) });
        const exactFit = sizedTo(probe.key, 2000, sizeOf, false);
        assert.equal(sizeOf(exactFit), 2000);
        const tooLarge = sizedTo(probe.key, 2000, sizeOf, true);
        putAs(store, tooLarge, 'too_large');
        await settled();
        assert.deepEqual(store.variants(probe.key), []);
        assertSameEntry(store.variants(small.key)[0], small);
        putAs(store, exactFit, 'stored');
        await settled();
        assertSameEntry(store.variants(probe.key)[0], exactFit);
        assert.deepEqual(store.variants(small.key), []);
      }));

    test('peek lists what variants lists', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const key = 'https://example.com/peek';
        ['gzip', 'br', ''].forEach((variantKey, i) => putAs(store, fetchedAt(i, { key, variantKey }), 'stored'));
        await settled();
        assert.deepEqual(variantKeys(store.peek(key)), ['', 'br', 'gzip']);
        assert.deepEqual(variantKeys(store.peek(key)), variantKeys(store.variants(key)));
      }));

    test('many entries read back intact', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const entries = Array.from({ length: 200 }, (_, i) =>
          makeEntry({ key: `https://example.com/item/${i}`, body: randomBytes(1 + ((i * 37) % 3000)) }),
        );
        for (const entry of entries) putAs(store, entry, 'stored');
        await settled();
        for (const entry of entries) assertSameEntry(store.variants(entry.key)[0], entry);
      }));
  });
}

/**
 * What a store that holds its own entries does (it decides every write at once, counts what it holds
 * and evicts by its own reads): StoreInspection, and the exact answers behind it.
 */
export function storeInspectionConformance(name: string, makeStore: StoreFactory<CacheStore & StoreInspection>, sizeOf: SizeOf): void {
  describe(`StoreInspection conformance: ${name}`, () => {
    test('put answers what the store decided: stored, vary_cap, too_large', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, (store) => {
        const key = 'https://example.com/varied';
        for (let i = 0; i < MAX_VARIANTS; i += 1) assert.equal(store.put(makeEntry({ key, variantKey: `v${i}` })), 'stored');
        assert.equal(store.put(makeEntry({ key, variantKey: 'one-too-many' })), 'vary_cap');
        assert.equal(store.put(makeEntry({ key: 'https://example.com/big', body: Buffer.alloc(ROOMY_MAX_BYTES) })), 'too_large');
        assert.equal(store.entryCount, MAX_VARIANTS);
      }));

    test('byte and entry counts are exact after puts, replaces and deletes', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
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
        assert.equal(store.delete('https://example.com/4'), 3);
        for (const id of [...live.keys()]) if (id.startsWith('https://example.com/4 ')) live.delete(id);
        assert.equal(store.delete('https://example.com/5', '1'), 1);
        live.delete('https://example.com/5 1');
        assert.equal(store.entryCount, live.size);
        assert.equal(store.byteCount, expectedBytes(live.values(), sizeOf));
        await settled();
        assert.equal(store.entryCount, live.size);
        assert.equal(store.byteCount, expectedBytes(live.values(), sizeOf));
      }));

    test('the least recently used entry is evicted first; a read counts as a use', () =>
      withThreeOfFour(makeStore, sizeOf, (store, [a, b, c, d]) => {
        assert.equal(store.variants(a.key).length, 1);
        assert.equal(store.put(d), 'stored');
        assert.deepEqual(store.variants(b.key), [], 'b was the least recently used');
        for (const kept of [a, c, d]) assertSameEntry(store.variants(kept.key)[0], kept);
        assert.equal(store.entryCount, 3);
        assert.ok(store.byteCount <= sizeOf(a) * 3);
      }));

    test('peek does not count as a use', () =>
      withThreeOfFour(makeStore, sizeOf, (store, [a, b, c, d]) => {
        assertSameEntry(store.peek(a.key)[0], a);
        assert.equal(store.put(d), 'stored');
        assert.deepEqual(store.variants(a.key), [], 'a was still the least recently used');
        for (const kept of [b, c, d]) assertSameEntry(store.variants(kept.key)[0], kept);
      }));

    test('entries() visits every entry and tolerates deletes while iterating', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const put = putTwenty(store);
        await settled();
        assert.deepEqual([...store.entries()].map((entry) => entry.requestTimeMs).sort(), put.map((entry) => entry.requestTimeMs).sort());
        walkDeleting(store, () => store.entries());
        assert.equal(store.entryCount, 0);
        assert.equal(store.byteCount, 0);
      }));
  });
}

/** What the invalidation engine sweeps: summaries of every stored variant, from the index. */
export function sweptStoreConformance(name: string, makeStore: StoreFactory<CacheStore & SweptStore>): void {
  describe(`SweptStore conformance: ${name}`, () => {
    test('summaries() gives key, variant, fetch time and tags of every variant, and tolerates deletes', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const put = putTwenty(store);
        await settled();
        const summary = ({ key, variantKey, requestTimeMs, tags }: { key: string; variantKey: string; requestTimeMs: number; tags: readonly string[] }) =>
          JSON.stringify([key, variantKey, requestTimeMs, tags]);
        assert.deepEqual([...store.summaries()].map(summary).sort(), put.map(summary).sort());
        walkDeleting(store, () => store.summaries());
      }));
  });
}

/**
 * What the hot tier asks of the tier it demotes into. `sizeOf`, for a store that evicts by its own
 * reads, also checks that `has` is not one.
 */
export function demotionTargetConformance(name: string, makeStore: StoreFactory<CacheStore & DemotionTarget>, sizeOf?: SizeOf): void {
  describe(`DemotionTarget conformance: ${name}`, () => {
    test('has tells which variants are stored', () =>
      withStore(makeStore, ROOMY_MAX_BYTES, async (store, settled) => {
        const key = 'https://example.com/has';
        for (const variantKey of ['gzip', '']) putAs(store, makeEntry({ key, variantKey }), 'stored');
        await settled();
        assert.deepEqual([store.has(key, 'gzip'), store.has(key, ''), store.has(key, 'br'), store.has(`${key}/other`, '')], [true, true, false, false]);
        store.delete(key, 'gzip');
        await settled();
        assert.deepEqual([store.has(key, 'gzip'), store.has(key, '')], [false, true]);
      }));

    if (sizeOf !== undefined) {
      test('has does not count as a use', () =>
        withThreeOfFour(makeStore, sizeOf, (store, [a, , , d]) => {
          assert.equal(store.has(a.key, a.variantKey), true);
          assert.equal(store.put(d), 'stored');
          assert.equal(store.has(a.key, a.variantKey), false, 'a was still the least recently used');
        }));
    }
  });
}

/** Where a durable store keeps its entries: a store can be opened there again, and the place removed. */
export interface DurablePlace<S> {
  open(): Promise<S>;
  remove(): Promise<void>;
}

/** What the node relies on of a store whose entries outlive the process. */
export function durableStoreConformance(name: string, makePlace: () => Promise<DurablePlace<CacheStore & DurableStore>>): void {
  describe(`DurableStore conformance: ${name}`, () => {
    test('after flush and close, the store opened again has every write, deletes included', async () => {
      const place = await makePlace();
      try {
        const entries = Array.from({ length: 50 }, (_, i) => makeEntry({ key: `https://example.com/durable/${i}`, body: randomBytes(1 + i * 13) }));
        const [gone, ...kept] = entries as [CacheEntry, ...CacheEntry[]];
        const first = await place.open();
        try {
          for (const entry of entries) assert.equal(first.put(entry), 'stored');
          assert.equal(first.delete(gone.key), 1);
          await first.flush();
        } finally {
          await first.close();
        }
        const again = await place.open();
        try {
          assert.deepEqual(again.variants(gone.key), []);
          for (const entry of kept) assertSameEntry(again.variants(entry.key)[0], entry);
        } finally {
          await again.close();
        }
      } finally {
        await place.remove();
      }
    });
  });
}
