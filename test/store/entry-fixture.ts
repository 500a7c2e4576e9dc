// Builds cache entries for the store tests: realistic headers, bodies with every byte value, and
// helpers to compare what a store returns with what was put.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { entryFields, type CacheEntry } from '../../src/cache/entry.js';

export interface EntryParts {
  key?: string;
  variantKey?: string;
  body?: Buffer;
  headers?: string[];
  route?: string;
}

/** Header carrying the body's SHA-256, so any served body can be checked on its own. */
export const BODY_DIGEST_HEADER = 'x-body-sha256';

export function bodyDigest(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

export function makeEntry(parts: EntryParts = {}): CacheEntry {
  const body = parts.body ?? randomBytes(64);
  const variantKey = parts.variantKey ?? '';
  return {
    key: parts.key ?? 'https://example.com/a',
    variantKey,
    varyNames: variantKey === '' ? [] : ['accept-encoding'],
    status: 200,
    headers: parts.headers ?? [
      'Content-Type',
      'application/octet-stream',
      'Cache-Control',
      'public, max-age=60',
      'ETag',
      '"v1"',
      BODY_DIGEST_HEADER,
      bodyDigest(body),
    ],
    body,
    requestTimeMs: 1_700_000_000_000,
    responseTimeMs: 1_700_000_000_020,
    correctedInitialAgeMs: 5,
    freshnessLifetimeMs: 60_000,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 30_000,
    mustRevalidate: false,
    noCache: false,
    etag: '"v1"',
    lastModified: undefined,
    tags: ['product-1', 'all'],
    forcedStale: false,
    surrogateControl: undefined,
    route: parts.route ?? 'assets',
  };
}

/** Every field equal, body byte for byte. */
export function assertSameEntry(actual: CacheEntry | undefined, expected: CacheEntry): void {
  assert.ok(actual !== undefined, `no entry for ${expected.key} [${expected.variantKey}]`);
  assert.ok(Buffer.compare(actual.body, expected.body) === 0, 'bodies differ');
  assert.deepEqual({ ...entryFields(actual), body: null }, { ...entryFields(expected), body: null });
}
