// `svc ban host_regex=… path_regex=… surrogate_key=…` (spec §4.2): the given fields combine with AND.
import { defineCommand } from 'citty';
import { BAN_FIELDS, type BanRequest } from '../api/requests.js';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';
import { CliError } from './cli-error.js';
import { withPositionals } from './positionals.js';

type BanField = (typeof BAN_FIELDS)[number];

function isBanField(name: string): name is BanField {
  return (BAN_FIELDS as readonly string[]).includes(name);
}

/** `field=value` arguments to a ban request; anything else is a usage error. */
export function parseBanArguments(list: readonly string[]): BanRequest {
  const usage = `expected ${BAN_FIELDS.map((field) => `${field}=…`).join(' ')}`;
  if (list.length === 0) throw new CliError(`nothing to ban: ${usage}`, 2);
  const spec: BanRequest = {};
  for (const argument of list) {
    const equals = argument.indexOf('=');
    const name = equals < 0 ? argument : argument.slice(0, equals);
    if (equals < 0 || !isBanField(name)) throw new CliError(`unknown ban argument ${JSON.stringify(argument)}: ${usage}`, 2);
    if (spec[name] !== undefined) throw new CliError(`${name} is given twice`, 2);
    spec[name] = argument.slice(equals + 1);
  }
  return spec;
}

export const banCommand = defineCommand({
  meta: { name: 'ban', description: 'ban everything matching host_regex=…, path_regex=…, surrogate_key=… (combined with AND)' },
  args: {
    predicate: { type: 'positional', required: false, description: 'host_regex=<RE2>, path_regex=<RE2> or surrogate_key=<tag>', valueHint: 'field=value…' },
    ...adminClientArgs,
  },
  async run({ args }) {
    const spec = parseBanArguments(args._.map(String));
    const client = clientFromFlags(args);
    const body = await callApi('ban', () => client.ban(spec));
    printAnswer(args.output, body, `banned: ${body.count} hot entries evicted; the ban hides matching warm entries for 24 hours`);
  },
});
withPositionals(banCommand, { variadic: true, values: BAN_FIELDS.map((field) => `${field}=`) });
