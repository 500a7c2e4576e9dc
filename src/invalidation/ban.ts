// One ban (spec §1.1): a predicate of up to three fields that must all match (AND), and the moment it
// was created. It hides an entry whose origin fetch began at or before that moment. The regexes are
// compiled here only to be validated: the ban list matches them many at a time (see ban-list.ts).
import RE2 from 're2';
import type { BanSpec } from './invalidator.js';
import { InvalidBanError } from './errors.js';
import { MAX_TAG_LENGTH } from '../cache/policy/surrogate-keys.js';
import type { CacheEntry } from '../cache/entry.js';
import { KeySplitter } from './url-key.js';

/**
 * Longest `host_regex` or `path_regex` accepted from an operator, in UTF-8 bytes. It bounds what one
 * ban costs in memory (its pattern is held in the ban list's RE2 sets and in the journal); 4 KiB
 * leaves room for an alternation of a few hundred paths.
 */
export const MAX_BAN_REGEX_BYTES = 4096;

/** What a ban has matched since it was created (it counts on this node only). */
export interface BanStats {
  /** Hot-tier entries its eager eviction removed. */
  evictedEntries: number;
  /** Lookups the lazy check answered as a miss because of it. */
  hiddenLookups: number;
}

export interface Ban {
  readonly id: string;
  /** Creation time, ms since the epoch; entries with requestTimeMs <= createdMs are hidden. */
  readonly createdMs: number;
  /** The predicate as given, empty fields dropped, the surrogate key trimmed. */
  readonly spec: Readonly<BanSpec>;
  readonly stats: BanStats;
}

/** The fields of `spec` that take part in the predicate: non-empty strings (a tag trimmed, as stored tags are). */
export function normaliseBanSpec(spec: BanSpec): BanSpec {
  const normalised: BanSpec = {};
  if (typeof spec.host_regex === 'string' && spec.host_regex.length > 0) normalised.host_regex = spec.host_regex;
  if (typeof spec.path_regex === 'string' && spec.path_regex.length > 0) normalised.path_regex = spec.path_regex;
  const tag = typeof spec.surrogate_key === 'string' ? spec.surrogate_key.trim() : '';
  if (tag.length > 0) normalised.surrogate_key = tag;
  return normalised;
}

function validateRegex(field: 'host_regex' | 'path_regex', pattern: string | undefined): void {
  if (pattern === undefined) return;
  try {
    new RE2(pattern);
  } catch (error) {
    // RE2's message names the construct and where it is, e.g. "missing ): a(b".
    throw new InvalidBanError('invalid_regex', `${field} is not a valid RE2 expression: ${(error as Error).message}`, field);
  }
}

/** Validates a ban; throws InvalidBanError (`empty_ban`, `invalid_regex`). */
export function compileBan(id: string, createdMs: number, spec: BanSpec): Ban {
  const normalised = normaliseBanSpec(spec);
  if (normalised.host_regex === undefined && normalised.path_regex === undefined && normalised.surrogate_key === undefined) {
    throw new InvalidBanError('empty_ban', 'a ban needs at least one non-empty field: host_regex, path_regex or surrogate_key');
  }
  validateRegex('host_regex', normalised.host_regex);
  validateRegex('path_regex', normalised.path_regex);
  return { id, createdMs, spec: normalised, stats: { evictedEntries: 0, hiddenLookups: 0 } };
}

/**
 * Refuses fields longer than a new ban from an operator may have (`field_too_long`). A ban already
 * journaled or sent by another node is applied whatever its length.
 */
export function assertBanFieldLengths(spec: BanSpec): void {
  for (const field of ['host_regex', 'path_regex'] as const) {
    const pattern = spec[field];
    if (pattern !== undefined && Buffer.byteLength(pattern, 'utf8') > MAX_BAN_REGEX_BYTES) {
      throw new InvalidBanError('field_too_long', `${field} is longer than ${MAX_BAN_REGEX_BYTES} bytes`, field);
    }
  }
  const tag = spec.surrogate_key?.trim();
  // A stored tag is never longer (longer ones are dropped when a response is stored), so such a ban
  // could match nothing.
  if (tag !== undefined && tag.length > MAX_TAG_LENGTH) {
    throw new InvalidBanError('field_too_long', `surrogate_key is longer than ${MAX_TAG_LENGTH} characters`, 'surrogate_key');
  }
}

/** Compiled regexes of bans matched one at a time (the store gate); the ban list matches many at once. */
const compiledRegexes = new WeakMap<Ban, { host: RE2 | undefined; path: RE2 | undefined }>();
const splitter = new KeySplitter();

/**
 * Whether the entry satisfies every given field of the ban, whatever its age. Regexes search (an
 * unanchored regex matches anywhere), as in the ban list.
 */
export function banMatches(ban: Ban, entry: Pick<CacheEntry, 'key' | 'tags'>): boolean {
  const { surrogate_key: tag, host_regex: host, path_regex: path } = ban.spec;
  if (tag !== undefined && !entry.tags.includes(tag)) return false;
  if (host === undefined && path === undefined) return true;
  let regexes = compiledRegexes.get(ban);
  if (regexes === undefined) {
    regexes = { host: host === undefined ? undefined : new RE2(host), path: path === undefined ? undefined : new RE2(path) };
    compiledRegexes.set(ban, regexes);
  }
  const parts = splitter.split(entry.key);
  if (regexes.host !== undefined && !regexes.host.test(parts.host)) return false;
  return regexes.path === undefined || regexes.path.test(parts.pathAndQuery);
}

/** `field=value` pairs, as the recent list and the logs show a ban. */
export function describeBan(spec: BanSpec): string {
  const pairs: string[] = [];
  if (spec.host_regex !== undefined) pairs.push(`host_regex=${spec.host_regex}`);
  if (spec.path_regex !== undefined) pairs.push(`path_regex=${spec.path_regex}`);
  if (spec.surrogate_key !== undefined) pairs.push(`surrogate_key=${spec.surrogate_key}`);
  return pairs.join(' ');
}
