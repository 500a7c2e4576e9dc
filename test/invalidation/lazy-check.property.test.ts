// The lazy check walks only the bans newer than the entry and answers surrogate-key-only bans from a
// map; this property says that shortcut never changes the answer: it equals checking every ban, with
// JavaScript's own RegExp as the independent matcher, before and after pruning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileBan } from '../../src/invalidation/ban.js';
import { BanList } from '../../src/invalidation/ban-list.js';
import type { BanSpec } from '../../src/invalidation/invalidator.js';
import { entry } from './fixture.js';

const HOSTS = ['a.com', 'b.com', 'c.org:8080'];
const PATHS = ['/p/1', '/p/2?q=1', '/q/2', '/r'];
const TAGS = ['t1', 't2', 't3'];
// Patterns whose meaning is the same in RE2 and in JavaScript.
const HOST_REGEXES = ['^a\\.com$', 'b', 'com$', 'a|c', '^[ab]\\.', ':8080'];
const PATH_REGEXES = ['^/p/', '\\?q=1', '1$', '^/(p|q)/2', 'r'];

interface Generated {
  spec: BanSpec;
  createdMs: number;
}

const banArbitrary = fc
  .record(
    {
      host_regex: fc.constantFrom(...HOST_REGEXES),
      path_regex: fc.constantFrom(...PATH_REGEXES),
      surrogate_key: fc.constantFrom(...TAGS),
    },
    { requiredKeys: [] },
  )
  .filter((spec) => Object.keys(spec).length > 0);

const scenario = fc.record({
  // Gaps between consecutive bans; 0 makes bans created in the same millisecond.
  bans: fc.array(fc.tuple(banArbitrary, fc.integer({ min: 0, max: 5 })), { maxLength: 30 }),
  entries: fc.array(
    fc.record({
      host: fc.constantFrom(...HOSTS),
      path: fc.constantFrom(...PATHS),
      tags: fc.subarray(TAGS),
      requestTimeMs: fc.integer({ min: 0, max: 160 }),
    }),
    { minLength: 1, maxLength: 20 },
  ),
  pruned: fc.nat(),
});

function bruteForce(bans: readonly Generated[], host: string, path: string, tags: readonly string[], requestTimeMs: number): boolean {
  return bans.some(
    ({ spec, createdMs }) =>
      requestTimeMs <= createdMs &&
      (spec.host_regex === undefined || new RegExp(spec.host_regex).test(host)) &&
      (spec.path_regex === undefined || new RegExp(spec.path_regex).test(path)) &&
      (spec.surrogate_key === undefined || tags.includes(spec.surrogate_key)),
  );
}

test('the lazy check equals a check of every ban, before and after pruning', () => {
  fc.assert(
    fc.property(scenario, ({ bans, entries, pruned }) => {
      const list = new BanList();
      const generated: Generated[] = [];
      let createdMs = 0;
      bans.forEach(([spec, gap], index) => {
        createdMs += gap;
        generated.push({ spec, createdMs });
        list.add(compileBan(`ban-${index}`, createdMs, spec));
      });
      const check = (remaining: readonly Generated[]): void => {
        for (const { host, path, tags, requestTimeMs } of entries) {
          const candidate = entry({ key: `http://${host}${path}`, tags, requestTimeMs });
          assert.equal(list.hides(candidate), bruteForce(remaining, host, path, tags, requestTimeMs), `${host}${path} ${tags} @${requestTimeMs}`);
        }
      };
      check(generated);
      // Pruning drops the bans created up to a cutoff, as the engine does.
      const cutoffMs = generated.length === 0 ? 0 : (generated[pruned % generated.length] as Generated).createdMs;
      const dropped = list.createdThrough(cutoffMs);
      assert.deepEqual(
        dropped.map((ban) => ban.createdMs),
        generated.filter((ban) => ban.createdMs <= cutoffMs).map((ban) => ban.createdMs),
      );
      list.dropOldest(dropped.length);
      check(generated.slice(dropped.length));
    }),
    { numRuns: 500 },
  );
});
