// The active bans, kept in creation order so the lazy check (spec §1.1) costs O(bans newer than the
// entry) and not O(all bans): it walks from the newest ban back and stops at the first one created
// before the entry's fetch began. Bans whose only field is a surrogate key are not walked at all: a
// map from tag to its newest such ban answers them in O(tags of the entry).
import type { CacheEntry } from '../cache/entry.js';
import { banHides, type Ban } from './ban.js';
import { keyParts, type KeyParts } from './url-key.js';

export class BanList {
  /**
   * Every active ban, oldest first. A ban made elsewhere arrives with the time it was made, which may be
   * older than bans already here, so adding keeps the order by creation time.
   */
  readonly #all: Ban[] = [];
  /** Bans with a host or path regex (and maybe a tag), oldest first: the ones the lazy check walks. */
  readonly #walked: Ban[] = [];
  /** For bans with only a surrogate key: the newest creation time per tag. */
  readonly #newestTagBanMs = new Map<string, number>();

  get size(): number {
    return this.#all.length;
  }

  /** Oldest first. */
  bans(): readonly Ban[] {
    return this.#all;
  }

  add(ban: Ban): void {
    insertByCreation(this.#all, ban);
    if (ban.host === undefined && ban.path === undefined && ban.tag !== undefined) {
      const newest = this.#newestTagBanMs.get(ban.tag) ?? -Infinity;
      this.#newestTagBanMs.set(ban.tag, Math.max(newest, ban.createdMs));
    } else {
      insertByCreation(this.#walked, ban);
    }
  }

  /** The lazy check: whether a ban created at or after the entry's fetch began matches it. */
  hides(entry: CacheEntry): boolean {
    const since = entry.requestTimeMs;
    if (this.#newestTagBanMs.size > 0) {
      for (const tag of entry.tags) {
        const banMs = this.#newestTagBanMs.get(tag);
        if (banMs !== undefined && since <= banMs) return true;
      }
    }
    let parts: KeyParts | undefined;
    for (let i = this.#walked.length - 1; i >= 0; i -= 1) {
      const ban = this.#walked[i] as Ban;
      if (ban.createdMs < since) return false;
      parts ??= keyParts(entry.key);
      if (banHides(ban, entry, parts)) return true;
    }
    return false;
  }

  /** The bans created at or before `cutoffMs`, oldest first (a prefix of the list); nothing is removed. */
  createdThrough(cutoffMs: number): Ban[] {
    let end = 0;
    while (end < this.#all.length && (this.#all[end] as Ban).createdMs <= cutoffMs) end += 1;
    return this.#all.slice(0, end);
  }

  /** Removes the `count` oldest bans (what createdThrough returned, once the prune sweep is done). */
  dropOldest(count: number): void {
    const dropped = this.#all.splice(0, count);
    let walked = 0;
    for (const ban of dropped) {
      if (this.#walked[walked] === ban) {
        walked += 1;
        continue;
      }
      // A tag-only ban: its tag's entry goes once no newer tag-only ban for that tag remains.
      const tag = ban.tag as string;
      if ((this.#newestTagBanMs.get(tag) ?? Infinity) <= ban.createdMs) this.#newestTagBanMs.delete(tag);
    }
    this.#walked.splice(0, walked);
  }
}

/** Inserts after every ban created no later than `ban`: O(1) for bans made in order, the usual case. */
function insertByCreation(list: Ban[], ban: Ban): void {
  let at = list.length;
  while (at > 0 && (list[at - 1] as Ban).createdMs > ban.createdMs) at -= 1;
  list.splice(at, 0, ban);
}
