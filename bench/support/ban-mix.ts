// The bans the ban benchmarks install, and the URLs they look up: none of the bans matches any of
// the URLs (other hosts, paths and tags), so every check runs to its end and nothing is hidden.
import type { BanSpec } from '../../src/invalidation/invalidator.js';

/**
 * The i-th ban of the mix: 40% surrogate key, 30% path regex, 10% host regex, 20% host and path
 * regex over 50 hosts (many path bans per host regex, as an operator banning sections of a site).
 */
export function benchBan(i: number): BanSpec {
  switch (i % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
      return { surrogate_key: `campaign-${i}` };
    case 4:
    case 5:
    case 6:
      return { path_regex: `^/section-${i}/` };
    case 7:
      return { host_regex: `^origin-${i}\\.example$` };
    default:
      return { host_regex: `^shop-${i % 50}\\.example$`, path_regex: `^/sale/${i}(/|$)` };
  }
}

/** The path of the i-th looked-up URL; its host is one of the mix's shop hosts. */
export function lookupPath(i: number): string {
  return `/catalogue/item-${i}?page=${i % 7}`;
}

export function lookupHost(i: number): string {
  return `shop-${i % 100}.example`;
}
