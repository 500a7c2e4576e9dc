// What each invalidation asks of the CDN (spec §6.2), as a pure function. A ban is an AND of up to
// three fields; the CDN can purge by one tag, one host or one URL prefix. Each ban maps to the
// narrowest CDN purge that still covers everything the ban hides, so the CDN never keeps serving what
// svc stopped serving; where nothing short of purging the whole zone would cover it, the ban is not
// forwarded and the skip is counted with its reason. docs/decisions.md lists every case.
import type { BanSpec } from '../invalidation/invalidator.js';
import { literalOf } from './regex-literal.js';

/** The `operation` label of the CDN metrics (spec §6.5); a batch purge is a purge. */
export type CdnOperation = 'purge' | 'ban' | 'refresh';
export const CDN_OPERATIONS: readonly CdnOperation[] = ['purge', 'ban', 'refresh'];

/** The four purge kinds of the CDN's zone purge call, named as its request body names them. */
export type PurgeKind = 'files' | 'tags' | 'prefixes' | 'hosts';

/** One thing the CDN must purge: one URL, tag, prefix or host, for the operation that asked. */
export interface PurgeTarget {
  operation: CdnOperation;
  kind: PurgeKind;
  value: string;
}

/**
 * The `reason` label of `svc_cdn_purge_skipped_total` (spec §6.2 leaves the values open):
 * - `regex_metacharacters`: a host_regex or path_regex is a pattern, not a literal (regex-literal.ts),
 *   and no surrogate key or literal host covers the ban;
 * - `path_without_host`: a literal path_regex with neither a literal host_regex nor a surrogate key:
 *   the CDN's prefixes begin with a host name, and the path alone names none;
 * - `queue_full`: the pending queue was at its bound, so the invalidation was not queued.
 */
export type SkipReason = 'regex_metacharacters' | 'path_without_host' | 'queue_full';
export const SKIP_REASONS: readonly SkipReason[] = ['regex_metacharacters', 'path_without_host', 'queue_full'];

/** An invalidation that the admin API applied, as the CDN mapping sees it. */
export type CdnInvalidation =
  | { type: 'purge'; urls: readonly string[] }
  | { type: 'refresh'; url: string }
  | { type: 'ban'; spec: BanSpec };

export type CdnMapping = { targets: PurgeTarget[] } | { skipped: SkipReason };

/** The CDN purges an invalidation calls for, or why it is not forwarded. */
export function mapInvalidation(invalidation: CdnInvalidation): CdnMapping {
  switch (invalidation.type) {
    case 'purge':
      return { targets: invalidation.urls.map((url) => ({ operation: 'purge', kind: 'files', value: url })) };
    case 'refresh':
      // The CDN has no "mark stale": purging the file makes its next request revalidate through svc.
      return { targets: [{ operation: 'refresh', kind: 'files', value: invalidation.url }] };
    case 'ban':
      return mapBan(invalidation.spec);
  }
}

function mapBan(spec: BanSpec): CdnMapping {
  const ban = (kind: PurgeKind, value: string): CdnMapping => ({ targets: [{ operation: 'ban', kind, value }] });
  // Every entry the ban hides carries the tag, whatever the regexes add to the predicate.
  if (spec.surrogate_key) return ban('tags', spec.surrogate_key.trim());
  const host = spec.host_regex ? literalOf(spec.host_regex) : undefined;
  const path = spec.path_regex ? literalOf(spec.path_regex) : undefined;
  if (spec.host_regex && host === undefined) return { skipped: 'regex_metacharacters' };
  if (host === undefined) return { skipped: path === undefined ? 'regex_metacharacters' : 'path_without_host' };
  const hostName = hostNameOf(host);
  if (spec.path_regex && path !== undefined && path.startsWith('/')) return ban('prefixes', `${hostName}${path}`);
  // No path, or one the CDN cannot take as a prefix: the whole host covers the ban.
  return ban('hosts', hostName);
}

/** The CDN purges host names: lower case (as svc's keys are) and without a port. */
function hostNameOf(host: string): string {
  const lower = host.toLowerCase();
  const port = /:\d*$/.exec(lower);
  return port ? lower.slice(0, port.index) : lower;
}
