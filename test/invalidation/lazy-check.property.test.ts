// The lazy check answers from RE2 sets, groups by tag and host regex, per-block time bounds and a
// per-entry "checked through" mark; this property says none of those shortcuts ever changes the
// answer: it equals checking every ban one by one, with JavaScript's own RegExp as the independent
// matcher, while bans arrive (in any creation order), entries are checked again and again, and bans
// are pruned.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileBan, type Ban } from '../../src/invalidation/ban.js';
import { BanList } from '../../src/invalidation/ban-list.js';
import type { BanSpec } from '../../src/invalidation/invalidator.js';
import { entry } from './fixture.js';

const HOSTS = ['a.com', 'b.com', 'c.org:8080'];
const PATHS = ['/p/1', '/p/2?q=1', '/q/2', '/r'];
const TAGS = ['t1', 't2', 't3'];
// Patterns whose meaning is the same in RE2 and in JavaScript.
// Literal ones (a map lookup), one that only looks literal (an unescaped dot) and one whose final `$`
// is escaped (never anchored, so it matches nothing here).
const HOST_REGEXES = ['^a\\.com$', '^c\\.org:8080$', '^a.com$', '^b\\.com\\$', 'b', 'com$', 'a|c', '^[ab]\\.', ':8080'];
const PATH_REGEXES = ['^/p/', '\\?q=1', '1$', '^/(p|q)/2', 'r', '^/p/\\d$'];

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

type Step =
  | { kind: 'ban'; spec: BanSpec; createdMs: number }
  | { kind: 'check' }
  | { kind: 'prune'; cutoffMs: number }
  | { kind: 'remove'; pick: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('ban' as const), spec: banArbitrary, createdMs: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('check' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('prune' as const), cutoffMs: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
);

const scenario = fc.record({
  // Up to a few hundred bans, so blocks of several sizes are built, merged, emptied and rebuilt.
  steps: fc.array(stepArbitrary, { minLength: 1, maxLength: 300 }),
  entries: fc.array(
    fc.record({
      host: fc.constantFrom(...HOSTS),
      path: fc.constantFrom(...PATHS),
      tags: fc.subarray(TAGS),
      requestTimeMs: fc.integer({ min: 0, max: 40 }),
    }),
    { minLength: 1, maxLength: 12 },
  ),
});

function matches(spec: BanSpec, host: string, path: string, tags: readonly string[]): boolean {
  return (
    (spec.host_regex === undefined || new RegExp(spec.host_regex).test(host)) &&
    (spec.path_regex === undefined || new RegExp(spec.path_regex).test(path)) &&
    (spec.surrogate_key === undefined || tags.includes(spec.surrogate_key))
  );
}

test('the lazy check and matching() equal a check of every ban, as bans come, are checked and go', () => {
  fc.assert(
    fc.property(scenario, ({ steps, entries }) => {
      const list = new BanList();
      let live: Ban[] = [];
      // The same entry objects are checked after every step, as a hot entry is on every hit.
      const subjects = entries.map((e) => ({ ...e, stored: entry({ key: `http://${e.host}${e.path}`, tags: e.tags, requestTimeMs: e.requestTimeMs }) }));
      const check = (when: string): void => {
        for (const { host, path, tags, requestTimeMs, stored } of subjects) {
          const expected = live.filter((ban) => requestTimeMs <= ban.createdMs && matches(ban.spec, host, path, tags));
          const found = list.hides(stored);
          const label = `${when}: ${host}${path} [${tags.join(',')}] @${requestTimeMs}`;
          assert.equal(found !== undefined, expected.length > 0, label);
          if (found !== undefined) assert.ok(expected.includes(found), `${label}: the ban named hides the entry`);
          const matching = live.filter((ban) => matches(ban.spec, host, path, tags));
          assert.deepEqual(new Set(list.matching(stored)), new Set(matching), `${label}: matching()`);
        }
      };
      steps.forEach((step, index) => {
        if (step.kind === 'ban') {
          const ban = compileBan(`ban-${index}`, step.createdMs, step.spec);
          list.add(ban);
          live.push(ban);
        } else if (step.kind === 'prune') {
          // What the engine prunes: the bans created up to a cutoff.
          const through = list.createdThrough(step.cutoffMs);
          assert.deepEqual(new Set(through), new Set(live.filter((ban) => ban.createdMs <= step.cutoffMs)));
          list.remove(through);
          live = live.filter((ban) => !through.includes(ban));
        } else if (step.kind === 'remove' && live.length > 0) {
          const ban = live[step.pick % live.length] as Ban;
          list.remove([ban]);
          live = live.filter((other) => other !== ban);
        }
        assert.equal(list.size, live.length);
        if (step.kind === 'check' || index === steps.length - 1) check(`after step ${index}`);
      });
    }),
    { numRuns: 300 },
  );
});
