// Cases of the ban list the property test (lazy-check.property.test.ts) reaches only by chance.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileBan } from '../../src/invalidation/ban.js';
import { BanList } from '../../src/invalidation/ban-list.js';
import { entry } from './fixture.js';

describe('ban list', () => {
  test('removing the newest of several surrogate-key bans leaves the next newest in force', () => {
    const list = new BanList();
    const oldest = compileBan('oldest', 10, { surrogate_key: 't' });
    const middle = compileBan('middle', 30, { surrogate_key: 't' });
    const newest = compileBan('newest', 40, { surrogate_key: 't' });
    for (const ban of [oldest, middle, newest]) list.add(ban);
    const fetchedAt20 = entry({ key: 'http://a.com/1', tags: ['t'], requestTimeMs: 20 });
    assert.equal(list.hides(fetchedAt20), newest);
    list.remove([newest]);
    assert.equal(list.hides(fetchedAt20), middle);
    list.remove([middle]);
    assert.equal(list.hides(fetchedAt20), undefined);
    assert.equal(list.hides(entry({ key: 'http://a.com/1', tags: ['t'], requestTimeMs: 5 })), oldest);
  });

  test('a ban created before others but added after them (another node’s time) is ordered and applied by its time', () => {
    const list = new BanList();
    const later = compileBan('later', 100, { path_regex: '^/a' });
    const earlier = compileBan('earlier', 50, { host_regex: '^b\\.com$' });
    list.add(later);
    const fetchedAt60 = entry({ key: 'http://b.com/x', requestTimeMs: 60 });
    const fetchedAt40 = entry({ key: 'http://b.com/y', requestTimeMs: 40 });
    assert.equal(list.hides(fetchedAt60), undefined);
    assert.equal(list.hides(fetchedAt40), undefined);
    list.add(earlier);
    assert.deepEqual(
      list.bans().map((ban) => ban.id),
      ['earlier', 'later'],
    );
    assert.equal(list.hides(fetchedAt60), undefined, 'fetched after the ban it matches');
    assert.equal(list.hides(fetchedAt40), earlier, 'checked before, yet checked again against the ban that came since');
    assert.deepEqual(
      list.createdThrough(60).map((ban) => ban.id),
      ['earlier'],
    );
    assert.equal(list.oldest(), earlier);
  });

  test('2,000 path bans sharing a host regex each answer for their own path and time', () => {
    const list = new BanList();
    for (let i = 0; i < 2000; i += 1) list.add(compileBan(`ban-${i}`, 100 + i, { host_regex: '^shop\\.example$', path_regex: `^/p/${i}(/|$)` }));
    assert.equal(list.hides(entry({ key: 'http://shop.example/p/1999', requestTimeMs: 0 }))?.id, 'ban-1999');
    assert.equal(list.hides(entry({ key: 'http://shop.example/p/1999/x', requestTimeMs: 2099 }))?.id, 'ban-1999');
    assert.equal(list.hides(entry({ key: 'http://shop.example/p/1999', requestTimeMs: 2100 })), undefined);
    assert.equal(list.hides(entry({ key: 'http://other.example/p/1', requestTimeMs: 0 })), undefined);
    assert.deepEqual(
      list.matching(entry({ key: 'http://shop.example/p/7' })).map((ban) => ban.id),
      ['ban-7'],
    );
  });
});
