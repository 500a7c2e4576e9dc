// The refresher's small parts on their own: due times, the token bucket, the due queue, the
// refetch request and the bounded registry.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { expiresAtMs, refreshDueAtMs } from '../../src/refresh/refresh-timing.js';
import { TokenBucket } from '../../src/refresh/token-bucket.js';
import { DueQueue } from '../../src/refresh/due-queue.js';
import { originRequestOf, refetchRequestOf } from '../../src/refresh/refetch-request.js';
import { RefreshRegistry, recordId, type RegistryRecord } from '../../src/refresh/refresh-registry.js';
import { RefreshOptionError } from '../../src/refresh/errors.js';
import { clientRequest } from './support/refresh-rig.js';

describe('refresh timing (RFC 9111 §4.2.3 current_age)', () => {
  const cases = [
    { name: 'no initial age', entry: { responseTimeMs: 10_000, correctedInitialAgeMs: 0, freshnessLifetimeMs: 100_000 }, due: 100_000, expires: 110_000 },
    { name: 'an upstream Age shortens both', entry: { responseTimeMs: 10_000, correctedInitialAgeMs: 30_000, freshnessLifetimeMs: 100_000 }, due: 70_000, expires: 80_000 },
    { name: 'older than 90% on arrival: due before it arrived', entry: { responseTimeMs: 10_000, correctedInitialAgeMs: 95_000, freshnessLifetimeMs: 100_000 }, due: 5_000, expires: 15_000 },
    { name: 'a zero lifetime', entry: { responseTimeMs: 10_000, correctedInitialAgeMs: 0, freshnessLifetimeMs: 0 }, due: 10_000, expires: 10_000 },
  ];
  for (const { name, entry, due, expires } of cases) {
    test(name, () => {
      assert.equal(refreshDueAtMs(entry), due);
      assert.equal(expiresAtMs(entry), expires);
    });
  }
  test('the fraction is a parameter', () => {
    assert.equal(refreshDueAtMs({ responseTimeMs: 0, correctedInitialAgeMs: 0, freshnessLifetimeMs: 1_000 }, 0.5), 500);
  });
});

describe('TokenBucket', () => {
  test('allows a burst, then one token per 1/rate seconds', () => {
    let now = 0;
    const bucket = new TokenBucket(10, 3, () => now);
    assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, true, false]);
    now += 50;
    assert.equal(bucket.tryTake(), false, 'half a token is not a token');
    now += 50;
    assert.equal(bucket.tryTake(), true);
    now += 60_000;
    assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, true, false], 'never more than the burst');
  });
  test('a clock stepping back adds no tokens', () => {
    let now = 1_000;
    const bucket = new TokenBucket(1, 1, () => now);
    assert.equal(bucket.tryTake(), true);
    now = 0;
    assert.equal(bucket.tryTake(), false);
  });
  test('refuses a rate or burst out of range at construction', () => {
    assert.throws(() => new TokenBucket(0, 1, () => 0), RefreshOptionError);
    assert.throws(() => new TokenBucket(1, 0, () => 0), (error: unknown) => error instanceof RefreshOptionError && error.code === 'invalid_option');
  });
});

describe('DueQueue', () => {
  test('pops in due order whatever the push order', () => {
    const queue = new DueQueue<string>();
    const times = [50, 10, 40, 10, 30, 70, 20, 60];
    times.forEach((atMs, index) => queue.push(`item${index}`, atMs));
    const popped: number[] = [];
    for (let slot = queue.pop(); slot !== undefined; slot = queue.pop()) popped.push(slot.atMs);
    assert.deepEqual(popped, [...times].sort((a, b) => a - b));
    assert.equal(queue.size, 0);
  });
  test('retain keeps only what it accepts, still in order', () => {
    const queue = new DueQueue<number>();
    for (let i = 0; i < 20; i++) queue.push(i, (i * 7) % 20);
    queue.retain((item) => item % 2 === 0);
    assert.equal(queue.size, 10);
    let last = -1;
    for (let slot = queue.pop(); slot !== undefined; slot = queue.pop()) {
      assert.equal(slot.item % 2, 0);
      assert.ok(slot.atMs >= last);
      last = slot.atMs;
    }
  });
});

describe('refetch request', () => {
  test('keeps the keyed authority and the fields the Vary names, nothing else', () => {
    const refetch = refetchRequestOf(
      clientRequest('/a?b=1', 'shop.example', ['Accept-Encoding', 'gzip', 'Cookie', 'secret=1', 'Accept-Language', 'fr']),
      ['accept-encoding', 'accept-language'],
    );
    assert.deepEqual(refetch, { path: '/a?b=1', host: 'shop.example', varyFields: ['Accept-Encoding', 'gzip', 'Accept-Language', 'fr'] });
    assert.deepEqual(originRequestOf(refetch, 'https://shop.example/a?b=1'), {
      path: '/a?b=1',
      rawHeaders: ['Accept-Encoding', 'gzip', 'Accept-Language', 'fr'],
      forwarding: { scheme: 'https', host: 'shop.example', peerAddress: '', forwardedFor: undefined, forwarded: undefined, strip: new Set() },
      clientAddress: '',
    });
  });
  for (const [name, host, path] of [
    ['no Host', '', '/a'],
    ['an absolute-form target', 'shop.example', 'http://shop.example/a'],
    ['an asterisk target', 'shop.example', '*'],
    ['a host with a space', 'shop example', '/a'],
    ['a bad port', 'shop.example:99999', '/a'],
  ] as const) {
    test(`no origin request for ${name}`, () => {
      assert.equal(originRequestOf({ path, host, varyFields: [] }, `http://shop.example/a`), undefined);
    });
  }
});

describe('RefreshRegistry', () => {
  const record = (key: string, route = 'r'): RegistryRecord => ({
    id: recordId(key, ''),
    key,
    variantKey: '',
    route,
    request: { path: '/', host: 'h', varyFields: [] },
    hits: 0,
    entryStampMs: 0,
    expiresAtMs: 0,
    dueAtMs: undefined,
    waitingForHits: false,
  });
  test('evicts the least recently hit record beyond its bound, and counts per route', () => {
    const registry = new RefreshRegistry(2);
    const a = record('a', 'one');
    const b = record('b', 'two');
    assert.equal(registry.add(a), undefined);
    assert.equal(registry.add(b), undefined);
    registry.touch(a);
    const evicted = registry.add(record('c', 'one'));
    assert.equal(evicted, b);
    assert.equal(registry.get(b.id), undefined);
    assert.equal(registry.size, 2);
    assert.equal(registry.sizeOf('one'), 2);
    assert.equal(registry.sizeOf('two'), 0);
  });
  test('replacing a record with the same id does not grow it', () => {
    const registry = new RefreshRegistry(5);
    registry.add(record('a'));
    registry.add(record('a'));
    assert.equal(registry.size, 1);
    assert.equal(registry.sizeOf('r'), 1);
  });
  test('refuses a bound below 1', () => {
    assert.throws(() => new RefreshRegistry(0), RefreshOptionError);
  });
});
