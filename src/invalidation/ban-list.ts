// The active bans and the lazy check (spec §1.1), at a cost that does not grow with the number of
// bans the way a walk over them does:
// - bans are grouped by surrogate key (a map looked up with the entry's tags) and, within a group, by
//   host regex, each distinct host regex matched once for all its bans; a host regex naming one host
//   exactly is a map lookup (literal-host.ts); the other host regexes of a group, and the path regexes
//   of bans sharing a host regex, are matched through RE2 sets (pattern-blocks.ts);
// - a ban whose only field is a surrogate key is a map lookup;
// - every entry remembers the last ban it was checked against (Varnish's objcore ban pointer): a later
//   lookup checks only the bans that arrived since, so a hit on an entry that passed costs a WeakMap
//   lookup however many bans are active.
// Blocks, groups and the whole list keep the newest creation time they hold, so an entry fetched
// after every ban of a block is not matched against it at all. Creation times may arrive out of
// order (a ban from another node carries its origin's time); nothing here relies on their order.
import type { Ban } from './ban.js';
import { PatternBlocks, type ItemBounds } from './pattern-blocks.js';
import { literalHost } from './literal-host.js';
import { hostOfKey, KeySplitter, type KeyParts } from './url-key.js';

/** What the lazy check reads of a stored entry: its key, fetch time and tags; never its body. */
export interface BanSubject {
  readonly key: string;
  readonly requestTimeMs: number;
  readonly tags: readonly string[];
}

/** A ban in a list, with the order it arrived in. */
class Listed {
  constructor(
    readonly ban: Ban,
    readonly seq: number,
  ) {}
}

/** Bans of which only the newest creation time matters to the lazy check (no regex to match). */
class NewestOf {
  readonly #all = new Set<Listed>();
  newest: Listed | undefined;

  get size(): number {
    return this.#all.size;
  }

  add(listed: Listed): void {
    this.#all.add(listed);
    if (this.newest === undefined || listed.ban.createdMs >= this.newest.ban.createdMs) this.newest = listed;
  }

  delete(listed: Listed): void {
    this.#all.delete(listed);
    if (this.newest !== listed) return;
    this.newest = undefined;
    for (const other of this.#all) if (this.newest === undefined || other.ban.createdMs >= this.newest.ban.createdMs) this.newest = other;
  }

  values(): Iterable<Listed> {
    return this.#all;
  }
}

const BAN_BOUNDS: ItemBounds<Listed> = { newestMs: (listed) => listed.ban.createdMs, lastSeq: (listed) => listed.seq };

/** The bans of one scope sharing one host regex. */
class HostGroup {
  /** Upper bounds over the group's bans (kept while it lives; a group is dropped once empty). */
  newestMs = -Infinity;
  lastSeq = 0;
  /** Bans with no path regex. */
  readonly pathless = new NewestOf();
  /** Bans with a path regex, found by it. */
  readonly paths = new PatternBlocks<Listed>(BAN_BOUNDS);

  constructor(readonly pattern: string) {}

  get size(): number {
    return this.pathless.size + this.paths.size;
  }
}

const GROUP_BOUNDS: ItemBounds<HostGroup> = { newestMs: (group) => group.newestMs, lastSeq: (group) => group.lastSeq };

/**
 * One check under way: what is checked, what was found, and the visitors the RE2 sets call. A list
 * has one and reuses it (checks are synchronous), so a check allocates nothing but the key's parts.
 */
class Probe {
  sinceMs = 0;
  checkedSeq = 0;
  found: Listed | undefined;
  /** Every ban matched, whatever its time, when the probe collects (matching()). */
  collected: Ban[] | undefined;
  #key = '';
  #parts: KeyParts | undefined;
  #host: string | undefined;
  readonly #splitter = new KeySplitter();

  start(key: string, sinceMs: number, checkedSeq: number, collected: Ban[] | undefined): void {
    this.#key = key;
    this.#parts = undefined;
    this.#host = undefined;
    this.sinceMs = sinceMs;
    this.checkedSeq = checkedSeq;
    this.found = undefined;
    this.collected = collected;
  }

  /** The key's host and path, split on first use: a check that reaches no regex never splits it. */
  parts(): KeyParts {
    this.#parts ??= this.#splitter.split(this.#key);
    return this.#parts;
  }

  /** The key's host as a string, for the map of literal hosts. */
  host(): string {
    this.#host ??= hostOfKey(this.#key);
    return this.#host;
  }

  /** Visits a ban whose path regex matched: it hides the entry when it is at least as new. */
  readonly visitBan = (listed: Listed): boolean => {
    if (this.collected !== undefined) {
      this.collected.push(listed.ban);
      return false;
    }
    if (listed.ban.createdMs < this.sinceMs) return false;
    this.found = listed;
    return true;
  };

  /** Visits a group whose host regex matched: its bans without a path regex, then its path regexes. */
  readonly visitGroup = (group: HostGroup): boolean => {
    if (this.collected !== undefined) {
      for (const listed of group.pathless.values()) this.collected.push(listed.ban);
    } else {
      const pathless = group.pathless.newest;
      if (pathless !== undefined && pathless.ban.createdMs >= this.sinceMs) {
        this.found = pathless;
        return true;
      }
    }
    return group.paths.size > 0 && group.paths.some(this.parts().pathAndQuery, this.sinceMs, this.checkedSeq, this.visitBan);
  };
}

/** The bans with one surrogate key (or the bans without one). */
class BanScope {
  newestMs = -Infinity;
  lastSeq = 0;
  /** Bans with no regex: in a tag's scope, the surrogate-key-only bans. */
  readonly bare = new NewestOf();
  /** Bans with a path regex and no host regex. */
  readonly pathOnly = new PatternBlocks<Listed>(BAN_BOUNDS);
  /** Groups of host regexes that name one host, by that host. */
  readonly literalGroups = new Map<string, HostGroup>();
  /** Groups of the other host regexes, by pattern, and the sets that find them. */
  readonly patternGroups = new Map<string, HostGroup>();
  readonly hostIndex = new PatternBlocks<HostGroup>(GROUP_BOUNDS);

  get isEmpty(): boolean {
    return this.bare.size === 0 && this.pathOnly.size === 0 && this.literalGroups.size === 0 && this.patternGroups.size === 0;
  }

  add(listed: Listed): void {
    this.newestMs = Math.max(this.newestMs, listed.ban.createdMs);
    this.lastSeq = Math.max(this.lastSeq, listed.seq);
    const { host_regex: host, path_regex: path } = listed.ban.spec;
    if (host === undefined) {
      if (path === undefined) this.bare.add(listed);
      else this.pathOnly.add(path, listed);
      return;
    }
    const literal = literalHost(host);
    let group = literal === undefined ? this.patternGroups.get(host) : this.literalGroups.get(literal);
    const isNew = group === undefined;
    group ??= new HostGroup(host);
    group.newestMs = Math.max(group.newestMs, listed.ban.createdMs);
    group.lastSeq = Math.max(group.lastSeq, listed.seq);
    if (path === undefined) group.pathless.add(listed);
    else group.paths.add(path, listed);
    if (literal !== undefined) {
      this.literalGroups.set(literal, group);
    } else if (isNew) {
      this.patternGroups.set(host, group);
      this.hostIndex.add(host, group);
    } else {
      this.hostIndex.grew(group);
    }
  }

  delete(listed: Listed): void {
    const { host_regex: host, path_regex: path } = listed.ban.spec;
    if (host === undefined) {
      if (path === undefined) this.bare.delete(listed);
      else this.pathOnly.delete(listed);
      return;
    }
    const literal = literalHost(host);
    const group = literal === undefined ? this.patternGroups.get(host) : this.literalGroups.get(literal);
    if (group === undefined) return;
    if (path === undefined) group.pathless.delete(listed);
    else group.paths.delete(listed);
    if (group.size > 0) return;
    if (literal !== undefined) {
      this.literalGroups.delete(literal);
    } else {
      this.patternGroups.delete(host);
      this.hostIndex.delete(group);
    }
  }

  /**
   * Runs the probe over this scope: sets `probe.found` to a ban created at or after `probe.sinceMs`
   * that matches the key and returns true, or, when the probe collects, adds every ban that matches.
   */
  search(probe: Probe): boolean {
    if (probe.collected !== undefined) {
      for (const listed of this.bare.values()) probe.collected.push(listed.ban);
    } else {
      if (this.newestMs < probe.sinceMs || this.lastSeq <= probe.checkedSeq) return false;
      const bare = this.bare.newest;
      if (bare !== undefined && bare.ban.createdMs >= probe.sinceMs) {
        probe.found = bare;
        return true;
      }
    }
    if (this.pathOnly.size > 0 && this.pathOnly.some(probe.parts().pathAndQuery, probe.sinceMs, probe.checkedSeq, probe.visitBan)) return true;
    if (this.literalGroups.size > 0) {
      const group = this.literalGroups.get(probe.host());
      if (group !== undefined && group.newestMs >= probe.sinceMs && group.lastSeq > probe.checkedSeq && probe.visitGroup(group)) return true;
    }
    return this.patternGroups.size > 0 && this.hostIndex.some(probe.parts().host, probe.sinceMs, probe.checkedSeq, probe.visitGroup);
  }
}

export class BanList {
  /** Every ban, oldest creation time first. */
  #byCreation: Listed[] = [];
  readonly #listed = new Map<Ban, Listed>();
  readonly #scopes = new Map<string, BanScope>();
  readonly #untagged = new BanScope();
  /** The newest creation time of any ban: an entry fetched after it needs no check. */
  #newestMs = -Infinity;
  /** Arrival number of the latest ban added. */
  #seq = 0;
  readonly #probe = new Probe();
  /**
   * For each entry checked and not hidden: the arrival number of the latest ban it was checked
   * against. Undefined in a list whose entries are each checked once (a walk of a tier).
   */
  readonly #checkedThrough: WeakMap<BanSubject, number> | undefined;

  /** `rememberChecks: false` for a list that checks each entry once: remembering would only cost. */
  constructor(options: { rememberChecks?: boolean } = {}) {
    this.#checkedThrough = options.rememberChecks === false ? undefined : new WeakMap();
  }

  get size(): number {
    return this.#byCreation.length;
  }

  /** The ban with the oldest creation time. */
  oldest(): Ban | undefined {
    return this.#byCreation[0]?.ban;
  }

  /** Oldest creation time first. */
  bans(): Ban[] {
    return this.#byCreation.map((listed) => listed.ban);
  }

  add(ban: Ban): void {
    this.#seq += 1;
    const listed = new Listed(ban, this.#seq);
    this.#listed.set(ban, listed);
    // Bans almost always arrive in creation order; one that does not is placed by its time.
    let at = this.#byCreation.length;
    while (at > 0 && (this.#byCreation[at - 1] as Listed).ban.createdMs > ban.createdMs) at -= 1;
    this.#byCreation.splice(at, 0, listed);
    this.#newestMs = Math.max(this.#newestMs, ban.createdMs);
    const tag = ban.spec.surrogate_key;
    if (tag === undefined) {
      this.#untagged.add(listed);
      return;
    }
    let scope = this.#scopes.get(tag);
    if (scope === undefined) {
      scope = new BanScope();
      this.#scopes.set(tag, scope);
    }
    scope.add(listed);
  }

  /** The lazy check: a ban created at or after the entry's fetch began that matches it, if any. */
  hides(subject: BanSubject): Ban | undefined {
    const sinceMs = subject.requestTimeMs;
    if (sinceMs > this.#newestMs) return undefined;
    const checkedSeq = this.#checkedThrough?.get(subject) ?? 0;
    if (checkedSeq === this.#seq) return undefined;
    const probe = this.#probe;
    probe.start(subject.key, sinceMs, checkedSeq, undefined);
    for (const tag of subject.tags) {
      if (this.#scopes.get(tag)?.search(probe) === true) return probe.found?.ban;
    }
    if (this.#untagged.search(probe)) return probe.found?.ban;
    this.#checkedThrough?.set(subject, this.#seq);
    return undefined;
  }

  /** Every ban whose predicate matches the entry, whatever its fetch time; oldest first. */
  matching(subject: BanSubject): Ban[] {
    const out: Ban[] = [];
    this.#probe.start(subject.key, -Infinity, 0, out);
    for (const tag of new Set(subject.tags)) this.#scopes.get(tag)?.search(this.#probe);
    this.#untagged.search(this.#probe);
    return out.sort((a, b) => a.createdMs - b.createdMs);
  }

  /** The bans created at or before `cutoffMs`, oldest first; nothing is removed. */
  createdThrough(cutoffMs: number): Ban[] {
    const through: Ban[] = [];
    for (const listed of this.#byCreation) {
      if (listed.ban.createdMs > cutoffMs) break;
      through.push(listed.ban);
    }
    return through;
  }

  /** Removes the given bans (those not in the list are ignored). */
  remove(bans: readonly Ban[]): void {
    const removed = new Set<Listed>();
    for (const ban of bans) {
      const listed = this.#listed.get(ban);
      if (listed === undefined) continue;
      this.#listed.delete(ban);
      removed.add(listed);
      const tag = ban.spec.surrogate_key;
      if (tag === undefined) {
        this.#untagged.delete(listed);
        continue;
      }
      const scope = this.#scopes.get(tag);
      scope?.delete(listed);
      if (scope?.isEmpty === true) this.#scopes.delete(tag);
    }
    if (removed.size === 0) return;
    this.#byCreation = this.#byCreation.filter((listed) => !removed.has(listed));
    this.#newestMs = this.#byCreation.at(-1)?.ban.createdMs ?? -Infinity;
  }
}
