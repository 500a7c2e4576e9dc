// `svc purge <url>…` (spec §4.2) and its batch form `svc purge --file <path>` (`-` for standard input,
// one URL per line, blank lines and `#` comments skipped). One URL goes to POST /v1/purge; several
// go to POST /v1/purge/batch in chunks of the server's batch limit.
// A batch is checked whole before anything is sent, whatever its source: one entry that is not an
// absolute http(s) URL refuses the run (exit 2), naming every such entry, and nothing is purged; a
// typo is fixed and the same command run again (docs/decisions.md).
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { defineCommand } from 'citty';
import { ABSOLUTE_URL_EXPECTATION, isAbsoluteHttpUrl } from '../api/absolute-url.js';
import { PURGE_BATCH_MAX_URLS } from '../api/limits.js';
import type { PurgeBatchResponse } from '../api/responses.js';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';
import { CliError } from './cli-error.js';
import { withPositionals } from './positionals.js';

/** Invalid entries named one per line before the rest are only counted: the first ones show the pattern. */
const MAX_NAMED_INVALID = 20;

interface Entry {
  url: string;
  /** Where the entry came from, for messages: `argument 2`, `urls.txt line 7`; empty for a lone URL. */
  where: string;
}

async function readUrlList(path: string): Promise<Entry[]> {
  let content: string;
  try {
    content = path === '-' ? await text(process.stdin) : await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, 2);
  }
  const source = path === '-' ? 'standard input' : path;
  return content.split('\n').flatMap((line, index) => {
    const url = line.trim();
    return url === '' || url.startsWith('#') ? [] : [{ url, where: `${source} line ${index + 1}` }];
  });
}

/** The usage error for a list with invalid entries: each named (up to a bound), then what happened. */
function invalidEntries(invalid: readonly Entry[], total: number): CliError {
  const lines = invalid.slice(0, MAX_NAMED_INVALID).map((entry) => `${entry.where === '' ? '' : `${entry.where}: `}not ${ABSOLUTE_URL_EXPECTATION}: ${entry.url}`);
  if (invalid.length > MAX_NAMED_INVALID) lines.push(`… and ${invalid.length - MAX_NAMED_INVALID} more`);
  if (total > 1) lines.push(`nothing was purged: ${invalid.length} of ${total} entries are not URLs; fix them and run again`);
  return new CliError(lines.join('\n'), 2);
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const list: T[][] = [];
  for (let start = 0; start < items.length; start += size) list.push(items.slice(start, start + size));
  return list;
}

export const purgeCommand = defineCommand({
  meta: { name: 'purge', description: 'purge URLs: every stored variant, in both tiers' },
  args: {
    url: { type: 'positional', required: false, description: 'absolute http(s) URL; several are purged as a batch', valueHint: 'url…' },
    file: { type: 'string', description: 'read URLs from this file, one per line ("-" for standard input)', valueHint: 'path' },
    ...adminClientArgs,
  },
  async run({ args }) {
    const given = args._.map(String);
    if (args.file !== undefined && given.length > 0) throw new CliError('give URLs as arguments or with --file, not both', 2);
    if (args.file === undefined && given.length === 0) throw new CliError('nothing to purge: give at least one URL or --file <path>', 2);
    const entries =
      args.file === undefined ? given.map((url, index) => ({ url, where: given.length === 1 ? '' : `argument ${index + 1}` })) : await readUrlList(args.file);
    if (entries.length === 0) throw new CliError(`nothing to purge: ${args.file} lists no URL`, 2);
    const invalid = entries.filter((entry) => !isAbsoluteHttpUrl(entry.url));
    if (invalid.length > 0) throw invalidEntries(invalid, entries.length);
    const client = clientFromFlags(args);

    if (args.file === undefined && entries.length === 1) {
      const url = entries[0]!.url;
      const body = await callApi('purge', () => client.purge(url));
      printAnswer(args.output, body, `purged ${url} (${body.count} stored variants removed)`);
      return;
    }

    const urls = entries.map((entry) => entry.url);
    const total: PurgeBatchResponse = { status: 'purged', count: 0, failed: 0 };
    for (const chunk of chunks(urls, PURGE_BATCH_MAX_URLS)) {
      const answer = await callApi('purge', () => client.purgeBatch(chunk));
      total.count += answer.count;
      total.failed += answer.failed;
    }
    printAnswer(args.output, total, `purged ${urls.length - total.failed} URLs (${total.count} stored variants removed, ${total.failed} failed)`);
    // Checked here already, so only a server with stricter rules refuses some: they are reported.
    if (total.failed > 0) throw new CliError(`purge: the server refused ${total.failed} of ${urls.length} URLs, which were not purged`, 1);
  },
});
withPositionals(purgeCommand, { variadic: true });
