// What `svc inspect` and the cachecheck view say a plain GET does with a stored response, and the
// stale windows it has left: read from the data plane's own reuse decision (issue 30 item 7).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CacheEntry } from '../../../src/cache/entry.js';
import { reuseOutlook, type ReuseOutlook } from '../../../src/cache/policy/reuse-outlook.js';
import { entry, T0 } from './fixtures.js';

interface Case {
  name: string;
  stored?: Partial<CacheEntry>;
  /** Seconds since the response arrived; the stored entry has a 60 s lifetime and no initial age. */
  atS: number;
  /** The route's window for an origin that gives no answer. */
  unreachableS?: number;
  outlook: ReuseOutlook;
}

const s = (seconds: number): number => seconds * 1000;
const none = { staleWhileRevalidateLeftMs: 0, staleIfErrorLeftMs: 0, staleIfUnreachableLeftMs: 0 };

const cases: Case[] = [
  { name: 'fresh, no windows', atS: 10, outlook: { state: 'fresh', ...none } },
  {
    name: 'fresh: every window is still whole (they start at expiry)',
    stored: { staleWhileRevalidateMs: s(30), staleIfErrorMs: s(100) },
    atS: 10,
    unreachableS: 300,
    outlook: { state: 'fresh', staleWhileRevalidateLeftMs: s(30), staleIfErrorLeftMs: s(100), staleIfUnreachableLeftMs: s(300) },
  },
  {
    name: 'past max-age, within stale-while-revalidate: stale',
    stored: { staleWhileRevalidateMs: s(30), staleIfErrorMs: s(100) },
    atS: 80,
    outlook: { state: 'stale', staleWhileRevalidateLeftMs: s(10), staleIfErrorLeftMs: s(80), staleIfUnreachableLeftMs: s(80) },
  },
  {
    name: 'past max-age + stale-while-revalidate: expired, still served if the origin fails',
    stored: { staleWhileRevalidateMs: s(30), staleIfErrorMs: s(100) },
    atS: 91,
    unreachableS: 300,
    outlook: { state: 'expired', staleWhileRevalidateLeftMs: 0, staleIfErrorLeftMs: s(69), staleIfUnreachableLeftMs: s(269) },
  },
  { name: 'past every window: expired, nothing left', stored: { staleWhileRevalidateMs: s(30), staleIfErrorMs: s(100) }, atS: 500, unreachableS: 300, outlook: { state: 'expired', ...none } },
  { name: 'refreshed (soft purge): expired at once', stored: { forcedStale: true }, atS: 1, outlook: { state: 'expired', ...none } },
  {
    name: 'refreshed with stale-while-revalidate: stale, served while revalidated',
    stored: { forcedStale: true, staleWhileRevalidateMs: s(30) },
    atS: 1,
    outlook: { state: 'stale', staleWhileRevalidateLeftMs: s(30), staleIfErrorLeftMs: 0, staleIfUnreachableLeftMs: 0 },
  },
  { name: 'must-revalidate: no stale window at all', stored: { mustRevalidate: true, staleWhileRevalidateMs: s(30) }, atS: 61, unreachableS: 300, outlook: { state: 'expired', ...none } },
  { name: 'no-cache: validated before every use, even while fresh', stored: { noCache: true }, atS: 1, unreachableS: 300, outlook: { state: 'no_cache', ...none } },
];

for (const { name, stored, atS, unreachableS, outlook } of cases) {
  test(name, () => {
    assert.deepEqual(reuseOutlook(entry(stored), T0 + s(atS), s(unreachableS ?? 0)), outlook);
  });
}
