// `svc inspect <url>`: what svc holds for a URL and how a plain GET of it would be answered, readable
// (GET /v1/debug/cachecheck): hit or miss and from which tier, age and freshness left, tags, the
// owner in strong mode, every stored variant, and the active bans that match.
import { defineCommand } from 'citty';
import { ABSOLUTE_URL_EXPECTATION, isAbsoluteHttpUrl } from '../api/absolute-url.js';
import type { CacheCheckResponse } from '../api/responses.js';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';
import { CliError } from './cli-error.js';

function freshness(seconds: number): string {
  return seconds >= 0 ? `fresh for ${seconds} s more` : `stale for ${-seconds} s`;
}

/** The answer as an operator reads it; pure, for the test and for `--output text`. */
export function describeCacheCheck(check: CacheCheckResponse): string {
  const lines = [check.url, `  key        ${check.key}`];
  if (check.hit) {
    lines.push(`  cached     yes: a plain GET is served from the ${check.source} tier`);
    lines.push(`  age        ${check.age_s} s, ${freshness(check.freshness_remaining_s ?? 0)}`);
    lines.push(`  tags       ${check.tags.length === 0 ? '-' : check.tags.join(' ')}`);
  } else {
    lines.push(`  cached     no: a plain GET goes to ${check.owner === null ? 'the origin' : `the owner (${check.owner}), then the origin`}`);
  }
  lines.push(`  owner      ${check.owner ?? '- (no ring: a single node or eventual mode)'}`);
  if (check.variants.length > 0) {
    lines.push(`  variants   ${check.variants.length}`);
    const rows = [
      ['TIER', 'STATUS', 'AGE', 'FRESH LEFT', 'BYTES', 'VARY', 'NOTE'],
      ...check.variants.map((variant) => [
        variant.tier,
        String(variant.status),
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
