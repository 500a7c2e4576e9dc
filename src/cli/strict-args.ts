// citty parses leniently: an unknown flag becomes a property nobody reads, and extra words land in
// `args._`. So `svc ban surrogate_key=x --dry-run` banned for real and `--sever=host` went to the
// default server. Before a command runs, its command line is checked here against the command's own
// definition: an unknown flag, a flag without its value or a word too many is a usage error (exit 2)
// in one line, and nothing is done.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ArgsDef, CommandDef, Resolvable } from 'citty';
import { CliError } from './cli-error.js';
import { positionalRules } from './positionals.js';

async function resolve<T>(value: Resolvable<T> | undefined): Promise<T | undefined> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : await value;
}

/** The flags a command accepts, as node:util's parser takes them; booleans also as `--no-<name>`. */
function flagOptions(args: ArgsDef): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') continue;
    const type = def.type === 'boolean' ? 'boolean' : 'string';
    const aliases = 'alias' in def && def.alias !== undefined ? [def.alias].flat() : [];
    const short = aliases.find((alias) => alias.length === 1);
    options[name] = short === undefined ? { type } : { type, short };
    for (const alias of aliases.filter((alias) => alias.length > 1)) options[alias] = { type };
    if (type === 'boolean') options[`no-${name}`] = { type: 'boolean' };
  }
  return options;
}

interface Target {
  command: CommandDef;
  /** `svc purge`, `svc config validate`: how the messages name it. */
  name: string;
  /** The arguments after the command's name. */
  rest: string[];
}

/** Walks the leading words that name subcommands, as citty will when it runs the line. */
async function findTarget(root: CommandDef, rawArgs: readonly string[]): Promise<Target> {
  let command = root;
  const names = [(await resolve(root.meta))?.name ?? 'svc'];
  let index = 0;
  for (; index < rawArgs.length; index++) {
    const subCommands = await resolve(command.subCommands);
    if (subCommands === undefined || Object.keys(subCommands).length === 0) break;
    const word = rawArgs[index]!;
    const sub = Object.hasOwn(subCommands, word) ? subCommands[word] : undefined;
    if (sub === undefined) {
      const expected = Object.keys(subCommands).join(', ');
      const what = word.startsWith('-') ? `flag ${word}` : `command ${JSON.stringify(word)}`;
      throw new CliError(`unknown ${what} for ${names.join(' ')}: expected one of ${expected} (see ${names.join(' ')} --help)`, 2);
    }
    command = (await resolve(sub)) as CommandDef;
    names.push(word);
  }
  return { command, name: names.join(' '), rest: rawArgs.slice(index) };
}

/** Throws a usage CliError (exit 2) when the command line does not fit the command it names. */
export async function checkArguments(root: CommandDef, rawArgs: readonly string[]): Promise<void> {
  const { command, name, rest } = await findTarget(root, rawArgs);
  const args = (await resolve(command.args)) ?? {};
  const options = flagOptions(args);
  const { tokens } = parseArgs({ args: rest, options, allowPositionals: true, strict: false, tokens: true });
  const see = `(see ${name} --help)`;
  let positionals = 0;
  for (const token of tokens) {
    if (token.kind === 'option') {
      if (!(token.name in options)) throw new CliError(`unknown flag ${token.rawName} for ${name} ${see}`, 2);
      if (options[token.name]!.type === 'string' && token.value === undefined) throw new CliError(`${token.rawName} needs a value ${see}`, 2);
    } else if (token.kind === 'positional') {
      positionals += 1;
    }
  }
  const named = Object.values(args).filter((def) => def.type === 'positional').length;
  if (positionals > named && !positionalRules(command).variadic) {
    const extra = tokens.filter((token) => token.kind === 'positional')[named];
    const takes = named === 0 ? 'takes no arguments' : `takes ${named} argument${named === 1 ? '' : 's'}`;
    throw new CliError(`unexpected argument ${JSON.stringify(extra?.kind === 'positional' ? extra.value : '')}: ${name} ${takes} ${see}`, 2);
  }
}
