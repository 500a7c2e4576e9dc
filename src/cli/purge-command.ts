// `svc purge <url>…` (spec §4.2) and its batch form `svc purge --file <path>` (`-` for standard input,
// one URL per line, blank lines and `#` comments skipped). One URL goes to POST /v1/purge; several
// go to POST /v1/purge/batch in chunks of the server's batch limit.
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { defineCommand } from 'citty';
import { ABSOLUTE_URL_EXPECTATION, isAbsoluteHttpUrl } from '../api/absolute-url.js';
import { PURGE_BATCH_MAX_URLS } from '../api/limits.js';
import type { PurgeBatchResponse } from '../api/responses.js';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';
import { CliError } from './cli-error.js';

async function readUrlList(path: string): Promise<string[]> {
  let content: string;
  try {
    content = path === '-' ? await text(process.stdin) : await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, 2);
  }
  return content
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
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
    for (const url of given) {
      if (!isAbsoluteHttpUrl(url)) throw new CliError(`not ${ABSOLUTE_URL_EXPECTATION}: ${url}`, 2);
    }
    const client = clientFromFlags(args);

    if (args.file === undefined && given.length === 1) {
      const url = given[0]!;
      const body = await callApi('purge', () => client.purge(url));
      printAnswer(args.output, body, `purged ${url} (${body.count} stored variants removed)`);
      return;
    }

    const urls = args.file === undefined ? given : await readUrlList(args.file);
    if (urls.length === 0) throw new CliError(`nothing to purge: ${args.file} lists no URL`, 2);
    const total: PurgeBatchResponse = { status: 'purged', count: 0, failed: 0 };
    for (const chunk of chunks(urls, PURGE_BATCH_MAX_URLS)) {
      const answer = await callApi('purge', () => client.purgeBatch(chunk));
      total.count += answer.count;
      total.failed += answer.failed;
    }
    printAnswer(args.output, total, `purged ${urls.length - total.failed} URLs (${total.count} stored variants removed, ${total.failed} failed)`);
    if (total.failed > 0) {
      throw new CliError(`purge: ${total.failed} of ${urls.length} URLs were not ${ABSOLUTE_URL_EXPECTATION} and were not purged`, 1);
    }
  },
});
