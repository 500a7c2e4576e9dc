// One ban (spec §1.1): a predicate of up to three fields that must all match (AND), and the moment it
// was created. It hides an entry whose origin fetch began at or before that moment.
import RE2 from 're2';
import type { CacheEntry } from '../cache/entry.js';
import type { BanSpec } from './invalidator.js';
import { InvalidBanError } from './errors.js';
import { keyParts, type KeyParts } from './url-key.js';

export interface Ban {
  readonly id: string;
  /** Creation time, ms since the epoch; entries with requestTimeMs <= createdMs are hidden. */
  readonly createdMs: number;
  /** The predicate as given, empty fields dropped. */
  readonly spec: Readonly<BanSpec>;
  readonly host: RE2 | undefined;
  readonly path: RE2 | undefined;
  readonly tag: string | undefined;
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

function compileRegex(field: 'host_regex' | 'path_regex', pattern: string | undefined): RE2 | undefined {
  if (pattern === undefined) return undefined;
  try {
    return new RE2(pattern);
  } catch (error) {
    // RE2's message names the construct and where it is, e.g. "missing ): a(b".
    throw new InvalidBanError('invalid_regex', `${field} is not a valid RE2 expression: ${(error as Error).message}`, field);
  }
}

/** Validates and compiles a ban; throws InvalidBanError (`empty_ban`, `invalid_regex`). */
export function compileBan(id: string, createdMs: number, spec: BanSpec): Ban {
  const normalised = normaliseBanSpec(spec);
  if (normalised.host_regex === undefined && normalised.path_regex === undefined && normalised.surrogate_key === undefined) {
    throw new InvalidBanError('empty_ban', 'a ban needs at least one non-empty field: host_regex, path_regex or surrogate_key');
  }
  return {
    id,
    createdMs,
    spec: normalised,
    host: compileRegex('host_regex', normalised.host_regex),
    path: compileRegex('path_regex', normalised.path_regex),
    tag: normalised.surrogate_key,
  };
}

/**
 * Whether the entry satisfies every given field of the ban, whatever its age. Regexes search (an
 * unanchored regex matches anywhere); `parts` is the entry key split once per lookup by the caller.
 */
export function banMatches(ban: Ban, entry: Pick<CacheEntry, 'key' | 'tags'>, parts: KeyParts = keyParts(entry.key)): boolean {
  if (ban.tag !== undefined && !entry.tags.includes(ban.tag)) return false;
  if (ban.host !== undefined && !ban.host.test(parts.host)) return false;
  if (ban.path !== undefined && !ban.path.test(parts.pathAndQuery)) return false;
  return true;
}

/** Whether the ban hides the entry: it matches and its origin fetch began no later than the ban. */
export function banHides(ban: Ban, entry: CacheEntry, parts?: KeyParts): boolean {
  return entry.requestTimeMs <= ban.createdMs && banMatches(ban, entry, parts);
}

/** `field=value` pairs, as the recent list and the logs show a ban. */
export function describeBan(spec: BanSpec): string {
  const pairs: string[] = [];
  if (spec.host_regex !== undefined) pairs.push(`host_regex=${spec.host_regex}`);
  if (spec.path_regex !== undefined) pairs.push(`path_regex=${spec.path_regex}`);
  if (spec.surrogate_key !== undefined) pairs.push(`surrogate_key=${spec.surrogate_key}`);
  return pairs.join(' ');
}
