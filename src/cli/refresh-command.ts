// `svc refresh <url>` (spec §4.2): a soft purge; the next request revalidates with the origin.
import { defineCommand } from 'citty';
import { ABSOLUTE_URL_EXPECTATION, isAbsoluteHttpUrl } from '../api/absolute-url.js';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';
import { CliError } from './cli-error.js';

export const refreshCommand = defineCommand({
  meta: { name: 'refresh', description: 'mark a URL stale so the next request revalidates it' },
  args: {
    url: { type: 'positional', required: true, description: 'absolute http(s) URL', valueHint: 'url' },
    ...adminClientArgs,
  },
  async run({ args }) {
    if (args._.length > 1) throw new CliError('refresh takes one URL', 2);
    if (!isAbsoluteHttpUrl(args.url)) throw new CliError(`not ${ABSOLUTE_URL_EXPECTATION}: ${args.url}`, 2);
    const client = clientFromFlags(args);
    const body = await callApi('refresh', () => client.refresh(args.url));
    printAnswer(args.output, body, `refreshed ${args.url} (${body.count} stored variants marked stale)`);
  },
});
