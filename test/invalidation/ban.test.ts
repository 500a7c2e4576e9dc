import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidBanError } from '../../src/invalidation/errors.js';
import type { BanSpec } from '../../src/invalidation/invalidator.js';
import { hotEntryBytes } from '../../src/store/hot-store.js';
import { entry, holds, openRig, serve, T0, type Rig } from './fixture.js';

/** Stores one entry per key in both tiers, fetched at T0; the clock then moves to T0+1000. */
function fill(rig: Rig, keys: readonly string[], tags: (key: string) => readonly string[] = () => []): void {
  for (const key of keys) rig.cache.store(entry({ key, tags: tags(key) }));
  rig.clock.ms = T0 + 1000;
}

/** The keys the hot tier still holds, sorted. */
function hotKeys(rig: Rig): string[] {
  return [...rig.hot.entries()].map((e) => e.key).sort();
}

async function withRig(run: (rig: Rig) => Promise<void>): Promise<void> {
  const rig = await openRig();
  try {
    await run(rig);
  } finally {
    await rig.cleanup();
  }
}

describe('ban predicates', () => {
  test('host_regex matches host[:port] of the key: lower-cased, default port removed', () =>
    withRig(async (rig) => {
      fill(rig, ['http://example.com/a', 'https://example.com/b', 'http://example.com:8080/c', 'http://other.com/a']);
      assert.equal((await rig.invalidator.ban({ host_regex: '^example\\.com$' })).count, 2);
      assert.deepEqual(hotKeys(rig), ['http://example.com:8080/c', 'http://other.com/a']);
      assert.equal((await rig.invalidator.ban({ host_regex: ':8080$' })).count, 1);
      assert.deepEqual(hotKeys(rig), ['http://other.com/a']);
    }));

  test('path_regex matches the path with its query, as Varnish req.url does', () =>
    withRig(async (rig) => {
      fill(rig, ['http://s.com/products/1?color=red', 'http://s.com/products/2', 'http://s.com/about', 'http://s.com/x?color=red']);
      assert.equal((await rig.invalidator.ban({ path_regex: 'color=red' })).count, 2);
      assert.equal((await rig.invalidator.ban({ path_regex: '^/products/' })).count, 1);
      assert.deepEqual(hotKeys(rig), ['http://s.com/about']);
    }));

  test('surrogate_key evicts the entries carrying the tag, found through the index', () =>
    withRig(async (rig) => {
      const tags: Record<string, string[]> = {
        'http://s.com/1': ['product-1', 'all'],
        'http://s.com/2': ['product-2', 'all'],
        'http://s.com/3': ['product-1'],
        'http://s.com/4': [],
      };
      fill(rig, Object.keys(tags), (key) => tags[key] ?? []);
      assert.equal((await rig.invalidator.ban({ surrogate_key: 'product-1' })).count, 2);
      assert.deepEqual(hotKeys(rig), ['http://s.com/2', 'http://s.com/4']);
      assert.equal((await rig.invalidator.ban({ surrogate_key: 'all' })).count, 1);
      assert.equal((await rig.invalidator.ban({ surrogate_key: 'product-1' })).count, 0);
    }));

  test('several fields combine with AND', () =>
    withRig(async (rig) => {
      const keys = ['http://a.com/p/1', 'http://a.com/q/1', 'http://b.com/p/1', 'http://b.com/q/1'];
      fill(rig, keys, (key) => (key.endsWith('/q/1') ? ['t'] : []));
      assert.equal((await rig.invalidator.ban({ host_regex: '^a\\.com$', path_regex: '^/p/' })).count, 1);
      assert.deepEqual(hotKeys(rig), ['http://a.com/q/1', 'http://b.com/p/1', 'http://b.com/q/1']);
      assert.equal((await rig.invalidator.ban({ host_regex: '^b\\.', surrogate_key: 't' })).count, 1);
      assert.deepEqual(hotKeys(rig), ['http://a.com/q/1', 'http://b.com/p/1']);
      assert.equal((await rig.invalidator.ban({ host_regex: 'a', path_regex: '^/p/', surrogate_key: 't' })).count, 0);
    }));

  for (const [spec, code, field, where] of [
    [{}, 'empty_ban', undefined, 'at least one'],
    [{ host_regex: '', path_regex: '', surrogate_key: '  ' }, 'empty_ban', undefined, 'at least one'],
    [{ host_regex: 'a(b' }, 'invalid_regex', 'host_regex', 'missing ): a(b'],
    [{ path_regex: '^/ok/', host_regex: '[z-a]' }, 'invalid_regex', 'host_regex', 'invalid character class range: z-a'],
    [{ path_regex: '(?<=x)y' }, 'invalid_regex', 'path_regex', 'invalid perl operator: (?<='],
  ] as const) {
    test(`${JSON.stringify(spec)} is refused (${code}) and changes nothing`, () =>
      withRig(async (rig) => {
        fill(rig, ['http://a.com/p/1']);
        await assert.rejects(rig.invalidator.ban(spec as BanSpec), (error: unknown) => {
          assert.ok(error instanceof InvalidBanError);
          assert.equal(error.code, code);
          assert.equal(error.field, field);
          assert.ok(error.message.includes(where), error.message);
          return true;
        });
        assert.deepEqual(rig.invalidator.activeBans(), []);
        assert.deepEqual(rig.invalidator.recent(), []);
        assert.equal(rig.invalidator.counts().ban, 0);
        assert.ok(holds(rig.hot, 'http://a.com/p/1'));
      }));
  }
});

describe('eager eviction and the lazy check', () => {
  test('the count is hot entries evicted; warm-only matches are hidden on lookup and deleted', () =>
    withRig(async (rig) => {
      rig.cache.store(entry({ key: 'http://a.com/hot' }));
      rig.warm.put(entry({ key: 'http://a.com/warm' }));
      rig.clock.ms = T0 + 1000;
      assert.equal((await rig.invalidator.ban({ host_regex: 'a\\.com' })).count, 1);
      assert.equal(holds(rig.warm, 'http://a.com/hot'), false, 'the warm copy of an evicted entry goes with it');
      assert.ok(holds(rig.warm, 'http://a.com/warm'), 'the warm tier is not scanned');
      assert.equal(serve(rig, 'http://a.com/warm'), undefined);
      assert.equal(holds(rig.warm, 'http://a.com/warm') || holds(rig.hot, 'http://a.com/warm'), false);
    }));

  test('entries fetched after the ban are served; fetches in flight when it came are not', () =>
    withRig(async (rig) => {
      rig.clock.ms = T0 + 1000;
      await rig.invalidator.ban({ surrogate_key: 'p1' });
      await rig.invalidator.ban({ path_regex: '^/r/' });
      // Both fetches began before the bans and finished after them.
      rig.cache.store(entry({ key: 'http://a.com/t', tags: ['p1'], requestTimeMs: T0 + 500 }));
      rig.cache.store(entry({ key: 'http://a.com/r/1', requestTimeMs: T0 + 999 }));
      // These began after.
      rig.cache.store(entry({ key: 'http://a.com/t2', tags: ['p1'], requestTimeMs: T0 + 1001 }));
      rig.cache.store(entry({ key: 'http://a.com/r/2', requestTimeMs: T0 + 1001 }));
      assert.equal(serve(rig, 'http://a.com/t'), undefined);
      assert.equal(serve(rig, 'http://a.com/r/1'), undefined);
      assert.ok(serve(rig, 'http://a.com/t2'));
      assert.ok(serve(rig, 'http://a.com/r/2'));
      // Hidden in the warm tier too, once the hot copy is gone.
      rig.warm.put(entry({ key: 'http://a.com/r/3', requestTimeMs: T0 + 10 }));
      assert.equal(serve(rig, 'http://a.com/r/3'), undefined);
    }));

  test('a surrogate-key ban follows replacements and evictions of the hot tier', async () => {
    // Room for three entries: /1, /2 and one filler at a time.
    const rig = await openRig({ hotMaxBytes: 3 * hotEntryBytes(entry({ key: 'http://a.com/filler/0' })) });
    try {
      rig.cache.store(entry({ key: 'http://a.com/1', tags: ['old'] }));
      // The same variant stored again without the tag: a ban on the tag must leave it alone.
      rig.cache.store(entry({ key: 'http://a.com/1', tags: ['new'] }));
      rig.cache.store(entry({ key: 'http://a.com/2', tags: ['evicted'] }));
      // Enough other entries to evict /2 from the small hot tier (it is demoted, its warm copy stays).
      for (let i = 0; i < 6; i += 1) {
        rig.cache.store(entry({ key: `http://a.com/filler/${i}` }));
        rig.hot.variants('http://a.com/1'); // keeps /1 recently used
      }
      assert.equal(holds(rig.hot, 'http://a.com/2'), false, 'the test needs /2 evicted');
      assert.ok(holds(rig.hot, 'http://a.com/1'), 'the test needs /1 kept');
      rig.clock.ms = T0 + 1000;
      assert.equal((await rig.invalidator.ban({ surrogate_key: 'old' })).count, 0);
      assert.ok(holds(rig.hot, 'http://a.com/1'));
      assert.equal((await rig.invalidator.ban({ surrogate_key: 'evicted' })).count, 0);
      assert.equal(serve(rig, 'http://a.com/2'), undefined, 'the warm copy is hidden all the same');
      assert.equal((await rig.invalidator.ban({ surrogate_key: 'new' })).count, 1);
    } finally {
      await rig.cleanup();
    }
  });
});

describe('what the admin API shows', () => {
  test('active bans oldest first with their expiry; recent operations newest first, bounded; counts', async () => {
    const rig = await openRig({ engine: { recentLimit: 3 } });
    try {
      rig.cache.store(entry({ key: 'http://a.com/1', tags: ['t'] }));
      rig.clock.ms = T0 + 1000;
      await rig.invalidator.ban({ host_regex: 'a\\.com', path_regex: '' });
      rig.clock.ms = T0 + 2000;
      await rig.invalidator.ban({ surrogate_key: ' t ' });
      rig.clock.ms = T0 + 3000;
      await rig.invalidator.purge('http://a.com/2');
      await rig.invalidator.refresh('http://a.com/3');
      await rig.invalidator.purgeBatch(['http://a.com/4']);
      const bans = rig.invalidator.activeBans();
      assert.equal(bans.length, 2);
      assert.deepEqual(
        bans.map(({ id: _id, ...rest }) => rest),
        [
          {
            host_regex: 'a\\.com',
            created_at: '2023-11-14T22:13:21.000Z',
            expires_at: '2023-11-15T22:13:21.000Z',
            evicted: 1,
            hidden: 0,
          },
          {
            surrogate_key: 't',
            created_at: '2023-11-14T22:13:22.000Z',
            expires_at: '2023-11-15T22:13:22.000Z',
            evicted: 0,
            hidden: 0,
          },
        ],
      );
      assert.notEqual(bans[0]?.id, bans[1]?.id);
      assert.deepEqual(
        rig.invalidator.recent().map((r) => [r.type, r.argument, r.count]),
        [
          ['purge_batch', '1 URLs', 0],
          ['refresh', 'http://a.com/3', 0],
          ['purge', 'http://a.com/2', 0],
        ],
      );
      assert.deepEqual(rig.invalidator.counts(), { purge: 1, purge_batch: 1, ban: 2, refresh: 1 });
      const probe = entry({ key: 'http://a.com/9', tags: ['t'] });
      assert.deepEqual(
        rig.invalidator.matchingBans(probe).map((b) => b.id),
        bans.map((b) => b.id),
      );
      assert.deepEqual(rig.invalidator.matchingBans(entry({ key: 'http://b.com/9' })), []);
    } finally {
      await rig.cleanup();
    }
  });
});
