// `svc inspect <url>`: what svc holds for a URL and how a plain GET of it would be answered, readable
// (GET /v1/debug/cachecheck): hit or miss and from which tier, whether it is fresh, STALE or expired
// and how long it may still stand in for a failing origin, age and freshness left, tags, the owner in
// strong mode, the variants (counted per key) with every stored copy, and the active bans that match.
import { defineCommand } from 'citty';
import { ABSOLUTE_URL_EXPECTATION, isAbsoluteHttpUrl } from '../api/absolute-url.js';
import type { CacheCheckResponse, CacheCheckVariant } from '../api/responses.js';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';
import { CliError } from './cli-error.js';

function freshness(seconds: number): string {
  return seconds >= 0 ? `fresh for ${seconds} s more` : `stale for ${-seconds} s`;
}

type Outlook = Pick<CacheCheckVariant, 'state' | 'stale_while_revalidate_s' | 'stale_if_error_s' | 'stale_if_unreachable_s'>;

/** How a plain GET is answered from the selected copy, which is in `tier`. */
function verdict(outlook: Outlook, tier: string): string {
  switch (outlook.state) {
    case 'fresh':
      return `yes, fresh: a plain GET is a HIT from the ${tier} tier`;
    case 'stale':
      return `yes, STALE: a plain GET is answered STALE from the ${tier} tier while svc revalidates it, for ${outlook.stale_while_revalidate_s} s more (stale-while-revalidate)`;
    case 'expired':
      return `yes, expired: past its freshness and any stale-while-revalidate window, a plain GET waits for the origin (a 304 keeps this copy, another answer replaces it)`;
    case 'no_cache':
      return `yes, no-cache: a plain GET waits for the origin to validate this copy (a 304 serves it from the ${tier} tier)`;
  }
}

/** Whether a stale copy still stands in for a failing origin, and for how long. */
function fallback(outlook: Outlook): string {
  const { stale_if_error_s: onError, stale_if_unreachable_s: unreachable } = outlook;
  if (onError === 0 && unreachable === 0) return 'none: if the origin fails, its error is passed on';
  if (onError === unreachable) return `served STALE if the origin fails, for ${onError} s more (stale-if-error)`;
  const parts = [onError > 0 ? `answers an error, for ${onError} s more (stale-if-error)` : '', `cannot be reached, for ${unreachable} s more`];
  return `served STALE if the origin ${parts.filter(Boolean).join('; if it ')}`;
}

/** Variants are counted per key, not per stored copy: one held in both tiers is one variant. */
function variantCount(variants: readonly CacheCheckVariant[]): string {
  const tiersOf = new Map<string, Set<string>>();
  for (const variant of variants) {
    const id = `${variant.vary.join(',')}=${variant.variant_key}`;
    tiersOf.set(id, (tiersOf.get(id) ?? new Set<string>()).add(variant.tier));
  }
  const counted = new Map<string, number>();
  for (const tiers of tiersOf.values()) {
    const place = tiers.size > 1 ? 'in both tiers' : `in the ${[...tiers][0]} tier`;
    counted.set(place, (counted.get(place) ?? 0) + 1);
  }
  return `${tiersOf.size} (${[...counted].map(([place, count]) => `${count} ${place}`).join(', ')})`;
}

/** The answer as an operator reads it; pure, for the test and for `--output text`. */
export function describeCacheCheck(check: CacheCheckResponse): string {
  const lines = [check.url, `  key        ${check.key}`];
  if (check.hit && check.state !== null) {
    const outlook: Outlook = {
      state: check.state,
      stale_while_revalidate_s: check.stale_while_revalidate_s ?? 0,
      stale_if_error_s: check.stale_if_error_s ?? 0,
      stale_if_unreachable_s: check.stale_if_unreachable_s ?? 0,
    };
    lines.push(`  cached     ${verdict(outlook, check.source ?? 'hot')}`);
    lines.push(`  age        ${check.age_s} s, ${freshness(check.freshness_remaining_s ?? 0)}`);
    if (outlook.state !== 'fresh') lines.push(`  fallback   ${fallback(outlook)}`);
    lines.push(`  tags       ${check.tags.length === 0 ? '-' : check.tags.join(' ')}`);
  } else {
    lines.push(`  cached     no: a plain GET goes to ${check.owner === null ? 'the origin' : `the owner (${check.owner}), then the origin`}`);
  }
  lines.push(`  owner      ${check.owner ?? '- (no ring: a single node or eventual mode)'}`);
  if (check.variants.length > 0) {
    lines.push(`  variants   ${variantCount(check.variants)}`);
    const rows = [
      ['TIER', 'STATUS', 'STATE', 'AGE', 'FRESH LEFT', 'BYTES', 'VARY', 'NOTE'],
      ...check.variants.map((variant) => [
        variant.tier,
        String(variant.status),
        variant.state === 'no_cache' ? 'no-cache' : variant.state,
        `${variant.age_s} s`,
        `${variant.freshness_remaining_s} s`,
        String(variant.bytes),
        variant.vary.length === 0 ? '-' : `${variant.vary.join(',')}=${variant.variant_key}`,
        [variant.forced_stale ? 'refreshed (stale)' : '', variant.invalidated ? 'invalidated (not served)' : ''].filter(Boolean).join(', ') || '-',
      ]),
    ];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    for (const row of rows) lines.push(`    ${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}`);
  }
  if (check.matching_bans.length > 0) {
    lines.push(`  bans       ${check.matching_bans.length} active ban${check.matching_bans.length === 1 ? '' : 's'} match`);
    for (const ban of check.matching_bans) {
      const predicate = (['host_regex', 'path_regex', 'surrogate_key'] as const).filter((field) => ban[field] !== undefined).map((field) => `${field}=${ban[field]}`);
      lines.push(`    ${ban.id}  ${predicate.join(' ')}  until ${ban.expires_at}`);
    }
  }
  return lines.join('\n');
}

export const inspectCommand = defineCommand({
  meta: { name: 'inspect', description: "show what the cache holds for a URL and how it would be served" },
  args: {
    url: { type: 'positional', required: true, description: 'absolute http(s) URL, as clients request it', valueHint: 'url' },
    ...adminClientArgs,
  },
  async run({ args }) {
    if (!isAbsoluteHttpUrl(args.url)) throw new CliError(`not ${ABSOLUTE_URL_EXPECTATION}: ${args.url}`, 2);
    const client = clientFromFlags(args);
    const body = await callApi('inspect', () => client.cacheCheck(args.url));
    printAnswer(args.output, body, describeCacheCheck(body));
  },
});
