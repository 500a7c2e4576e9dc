import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CacheEntry } from '../../../src/cache/entry.js';
import { requestDirectives } from '../../../src/cache/policy/request-directives.js';
import { decideReuse, staleIfErrorAllowed, staleIfUnreachableAllowed, type ReuseAction } from '../../../src/cache/policy/reuse.js';
import { entry, fields, T0 } from './fixtures.js';

interface Case {
  name: string;
  request?: Record<string, string>;
  stored?: Partial<CacheEntry>;
  /** Seconds since the response arrived; the stored entry has a 60 s lifetime and no initial age. */
  atS: number;
  action: ReuseAction;
  staleIfError: boolean;
}

const cases: Case[] = [
  { name: 'fresh', atS: 10, action: 'fresh', staleIfError: true },
  { name: 'fresh until the lifetime is reached', atS: 59.999, action: 'fresh', staleIfError: true },
  { name: 'stale when age equals the lifetime', atS: 60, action: 'revalidate', staleIfError: false },
  { name: 'initial age counts', stored: { correctedInitialAgeMs: 55_000 }, atS: 10, action: 'revalidate', staleIfError: false },
  { name: 'stale-while-revalidate window', stored: { staleWhileRevalidateMs: 30_000 }, atS: 80, action: 'stale_while_revalidate', staleIfError: false },
  { name: 'past the stale-while-revalidate window', stored: { staleWhileRevalidateMs: 30_000 }, atS: 91, action: 'revalidate', staleIfError: false },
  { name: 'stale-if-error window', stored: { staleIfErrorMs: 60_000 }, atS: 100, action: 'revalidate', staleIfError: true },
  { name: 'past the stale-if-error window', stored: { staleIfErrorMs: 60_000 }, atS: 121, action: 'revalidate', staleIfError: false },
  { name: 'response no-cache always revalidates', stored: { noCache: true, staleIfErrorMs: 60_000 }, atS: 1, action: 'revalidate', staleIfError: false },
  { name: 'must-revalidate: no stale, not even with max-stale', request: { 'cache-control': 'max-stale' }, stored: { mustRevalidate: true, staleWhileRevalidateMs: 30_000 }, atS: 61, action: 'revalidate', staleIfError: false },
  { name: 'request no-cache revalidates a fresh entry', request: { 'cache-control': 'no-cache' }, atS: 1, action: 'revalidate', staleIfError: true },
  { name: 'Pragma: no-cache revalidates (§5.4)', request: { pragma: 'no-cache' }, atS: 1, action: 'revalidate', staleIfError: true },
  { name: 'request max-age older than the entry', request: { 'cache-control': 'max-age=5' }, atS: 10, action: 'revalidate', staleIfError: true },
  { name: 'request max-age the entry meets', request: { 'cache-control': 'max-age=30' }, atS: 10, action: 'fresh', staleIfError: true },
  { name: 'request max-age=0 revalidates', request: { 'cache-control': 'max-age=0' }, atS: 0.5, action: 'revalidate', staleIfError: true },
  { name: 'request max-age blocks stale-while-revalidate', request: { 'cache-control': 'max-age=61' }, stored: { staleWhileRevalidateMs: 30_000 }, atS: 70, action: 'revalidate', staleIfError: false },
  { name: 'min-fresh not met', request: { 'cache-control': 'min-fresh=20' }, atS: 50, action: 'revalidate', staleIfError: true },
  { name: 'min-fresh met', request: { 'cache-control': 'min-fresh=20' }, atS: 30, action: 'fresh', staleIfError: true },
  { name: 'max-stale with a value, within it', request: { 'cache-control': 'max-stale=30' }, atS: 80, action: 'stale_acceptable', staleIfError: false },
  { name: 'max-stale with a value, beyond it', request: { 'cache-control': 'max-stale=30' }, atS: 91, action: 'revalidate', staleIfError: false },
  { name: 'max-stale without a value', request: { 'cache-control': 'max-stale' }, atS: 1_000_000, action: 'stale_acceptable', staleIfError: false },
  { name: 'only-if-cached with a fresh entry', request: { 'cache-control': 'only-if-cached' }, atS: 1, action: 'fresh', staleIfError: true },
  { name: 'only-if-cached with a stale entry: 504', request: { 'cache-control': 'only-if-cached' }, atS: 61, action: 'gateway_timeout', staleIfError: false },
  { name: 'only-if-cached with max-stale', request: { 'cache-control': 'only-if-cached, max-stale' }, atS: 61, action: 'stale_acceptable', staleIfError: false },
  { name: 'only-if-cached within stale-while-revalidate', request: { 'cache-control': 'only-if-cached' }, stored: { staleWhileRevalidateMs: 30_000 }, atS: 70, action: 'stale_while_revalidate', staleIfError: false },
  { name: 'forcedStale revalidates a fresh entry', stored: { forcedStale: true }, atS: 1, action: 'revalidate', staleIfError: false },
  { name: 'forcedStale ignores max-stale', request: { 'cache-control': 'max-stale' }, stored: { forcedStale: true }, atS: 1, action: 'revalidate', staleIfError: false },
  { name: 'forcedStale with stale-while-revalidate serves stale and refreshes', stored: { forcedStale: true, staleWhileRevalidateMs: 30_000 }, atS: 1, action: 'stale_while_revalidate', staleIfError: false },
  { name: 'forcedStale with stale-if-error', stored: { forcedStale: true, staleIfErrorMs: 30_000 }, atS: 1, action: 'revalidate', staleIfError: true },
  { name: 'zero lifetime', stored: { freshnessLifetimeMs: 0 }, atS: 0, action: 'revalidate', staleIfError: false },
];

describe('RFC 9111 §4, §4.2.4, §5.2.1 and RFC 5861: reusing a stored response', () => {
  for (const c of cases) {
    test(c.name, () => {
      const stored = entry({ responseTimeMs: T0, ...c.stored });
      const decision = decideReuse(requestDirectives(fields(c.request)), stored, T0 + c.atS * 1000);
      assert.equal(decision.action, c.action);
      assert.equal(decision.staleIfError, c.staleIfError);
      assert.equal(decision.ageMs, stored.correctedInitialAgeMs + c.atS * 1000);
    });
  }
  test('staleIfErrorAllowed follows the stale-if-error window', () => {
    const stored = entry({ staleIfErrorMs: 10_000 });
    assert.equal(staleIfErrorAllowed(stored, T0 + 65_000), true);
    assert.equal(staleIfErrorAllowed(stored, T0 + 75_000), false);
  });
  test('staleIfUnreachableAllowed: the longer of stale-if-error and the unreachable window', () => {
    const stored = entry({ staleIfErrorMs: 10_000 });
    assert.equal(staleIfUnreachableAllowed(stored, T0 + 75_000, 0), false);
    assert.equal(staleIfUnreachableAllowed(stored, T0 + 75_000, 30_000), true);
    assert.equal(staleIfUnreachableAllowed(stored, T0 + 95_000, 30_000), false);
    assert.equal(staleIfUnreachableAllowed(entry(), T0 + 65_000, 30_000), true);
  });
  test('staleIfUnreachableAllowed never overrides no-cache, must-revalidate, proxy-revalidate or s-maxage', () => {
    assert.equal(staleIfUnreachableAllowed(entry({ mustRevalidate: true }), T0 + 65_000, 300_000), false);
    assert.equal(staleIfUnreachableAllowed(entry({ noCache: true }), T0 + 1_000, 300_000), false);
  });
});
