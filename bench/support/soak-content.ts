// What the soak asks for and what its origin answers, in one place, so that the client can check
// every body it is served against what the origin sent for that path and variant. Four kinds of
// path: `hot` (a Zipf-popular catalogue, cached an hour, tagged in groups), `vary` (Vary:
// Accept-Language, four languages), `short` (max-age 2 s with an ETag: it keeps going stale and
// being revalidated) and `new` (a path never asked before: a miss, and bytes the tiers must make room
// for). A few hosts besides the main one, so that a host ban hides a tenant and not everything.
import { createHash } from 'node:crypto';

export type PathKind = 'hot' | 'vary' | 'short' | 'new';

export const MAIN_HOST = 'www.soak.test';
/** Tenants' hosts: `t0.soak.test` …, each banned by host now and then. */
export const TENANTS = 4;
export const LANGUAGES = ['en', 'fr', 'de', 'ja'] as const;
/** Surrogate-key groups of the hot catalogue: a ban of one hides a 32nd of it. */
export const HOT_GROUPS = 32;

export const HOT_KEYS = 5_000;
export const VARY_KEYS = 500;
export const SHORT_KEYS = 200;
/** Zipf exponent of the popular kinds: a CDN catalogue's (bench/support/zipf.ts). */
export const ZIPF_S = 1;

export function tenantHost(tenant: number): string {
  return `t${tenant}.soak.test`;
}

/** The kind of a path the origin is asked for, and its rank (or counter); undefined for anything else. */
export function parsePath(path: string): { kind: PathKind; rank: number } | undefined {
  const match = /^\/(hot|vary|short|new)\/(\d{1,9})$/.exec(path);
  return match === null ? undefined : { kind: match[1] as PathKind, rank: Number(match[2]) };
}

function hashOf(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

/** Body sizes by kind: hot 256 B to 16 KiB, new 4 to 48 KiB (the bytes that push the tiers), the rest small. */
function bodyBytes(kind: PathKind, path: string): number {
  const unit = hashOf(path) / 2 ** 32;
  switch (kind) {
    case 'hot':
      return Math.round(256 * 64 ** unit);
    case 'new':
      return 4_096 + Math.round(unit * 45_056);
    case 'vary':
      return 1_024 + Math.round(unit * 3_072);
    case 'short':
      return 512 + Math.round(unit * 1_536);
  }
}

/**
 * The body the origin sends for `path` in `language` (the `vary` kind's variant; '' for the others):
 * a first line naming both, then a filler byte of its own, so that a body served for the wrong path
 * or variant, cut short or mixed with another, does not compare equal.
 */
export function expectedBody(kind: PathKind, path: string, language: string): Buffer {
  const firstLine = Buffer.from(`${path} ${language}\n`);
  const size = Math.max(bodyBytes(kind, path), firstLine.length);
  const body = Buffer.alloc(size, 97 + (hashOf(`${path} ${language}`) % 26));
  firstLine.copy(body);
  return body;
}

export function etagOf(path: string): string {
  return `"${hashOf(path).toString(16)}"`;
}

/** The origin's header fields for a path of `kind` with rank `rank`. */
export function originHeaders(kind: PathKind, path: string, rank: number): Record<string, string> {
  switch (kind) {
    case 'hot':
      return { 'cache-control': 'public, max-age=3600', 'surrogate-key': `hot g${rank % HOT_GROUPS}`, etag: etagOf(path) };
    case 'new':
      return { 'cache-control': 'max-age=3600', 'cache-tag': `new,n${rank % 16}` };
    case 'vary':
      return { 'cache-control': 'max-age=3600', vary: 'accept-language', 'x-cache-tags': `vary v${rank % 8}` };
    case 'short':
      return { 'cache-control': 'max-age=2', etag: etagOf(path) };
  }
}
