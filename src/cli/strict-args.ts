// citty parses leniently: an unknown flag becomes a property nobody reads, a flag without its value
// becomes '', and extra words land in `args._`. So `svc ban surrogate_key=x --dry-run` banned for real
// and `--sever=host` went to the default server. citty's parse of a command line, the only one made,
// is checked here against the command's own definition before the command runs: an unknown command
// or flag, a flag without its value or a word too many is a usage error (exit 2) in one line, and
// nothing is done. citty's own checks (a required argument missing, a value an enum flag does not
// list) are made while it parses, so they come first. The one thing its parse cannot show, a flag
// named like a positional argument, is looked for in the words before it (positionalAsFlag).
import { runCommand, type ArgDef, type ArgsDef, type CittyPlugin } from 'citty';
import { CliError } from './cli-error.js';
import { resolved, type CommandPath } from './command-path.js';
import { positionalRules } from './positionals.js';

/** The words of a flag name, split as citty splits them: at `-`, `_`, `.`, `/` and before a capital. */
function words(name: string): string[] {
  return name.split(/[-_./]|(?<=[a-z])(?=[A-Z])/).filter((word) => word !== '');
}

/**
 * Every key citty's parse may hold an argument under: its name and aliases, and the camelCase and
 * kebab-case forms of its name, which citty also accepts on the command line and copies the value to
 * (`--log-format` is also `logFormat`).
 */
function spellings(args: ArgsDef): Map<string, ArgDef> {
  const byKey = new Map<string, ArgDef>();
  for (const [name, def] of Object.entries(args)) {
    const parts = words(name);
    const camel = parts.map((word, index) => (index === 0 ? word.charAt(0).toLowerCase() : word.charAt(0).toUpperCase()) + word.slice(1)).join('');
    const kebab = parts.map((word) => word.toLowerCase()).join('-');
    const aliases = 'alias' in def && def.alias !== undefined ? [def.alias].flat() : [];
    for (const key of [name, ...aliases, camel, kebab]) byKey.set(key, def);
  }
  return byKey;
}

/** The flag as it was typed, near enough: citty keeps `--no-<name>` as `<name>: false`. */
function typed(key: string, value: unknown): string {
  if (value === false) return `--no-${key}`;
  return key.length === 1 ? `-${key}` : `--${key}`;
}

/** Throws the usage error for the first thing in citty's parse that the command's definition does not allow. */
function checkParsed(parsed: Readonly<Record<string, unknown>>, args: ArgsDef, path: CommandPath): void {
  const name = path.names.join(' ');
  const see = `(see ${name} --help)`;
  const known = spellings(args);
  for (const [key, value] of Object.entries(parsed)) {
    // citty's list of the positional words (a `--_` flag was refused before citty read the line).
    if (key === '_') continue;
    const def = known.get(key);
    const takesValue = def?.type === 'string' || def?.type === 'enum';
    // A string flag given as `--no-<name>` is read as false: no such flag exists.
    if (def === undefined || (takesValue && typeof value === 'boolean')) throw new CliError(`unknown flag ${typed(key, value)} for ${name} ${see}`, 2);
    // citty gives a flag that ends the line without its value as ''; an empty value means nothing to any svc flag either.
    if (takesValue && value === '') throw new CliError(`--${key} needs a value ${see}`, 2);
  }
  const positionals = parsed._ as string[];
  const named = Object.values(args).filter((def) => def.type === 'positional').length;
  if (positionals.length > named && !positionalRules(path.command).variadic) {
    const takes = named === 0 ? 'takes no arguments' : `takes ${named} argument${named === 1 ? '' : 's'}`;
    throw new CliError(`unexpected argument ${JSON.stringify(positionals[named])}: ${name} ${takes} ${see}`, 2);
  }
}

/**
 * The first word that gives, as a flag, a name citty keeps positional arguments under (`_` and each
 * positional's own), without its value. citty writes the positionals there over what such a flag
 * held, so `--url=x` would vanish from its parse (and `--_` breaks the parse): these words are looked
 * for in the line itself, up to a `--`, after which every word is positional. A word of short flags
 * (`-a_`) gives each of its letters as a flag.
 */
function positionalAsFlag(rest: readonly string[], args: ArgsDef): string | undefined {
  const names = ['_', ...Object.keys(args).filter((name) => args[name]!.type === 'positional')];
  const flags = new Set(names.flatMap((name) => [`--${name}`, `--no-${name}`, ...(name.length === 1 ? [`-${name}`] : [])]));
  const end = rest.indexOf('--');
  const givesOne = (flag: string): boolean =>
    flags.has(flag) || (/^-[^-]/.test(flag) && [...flag.slice(1)].some((letter) => flags.has(`-${letter}`)));
  return rest
    .slice(0, end < 0 ? rest.length : end)
    .map((word) => word.split('=')[0]!)
    .find(givesOne);
}

/** Runs the command `path` names with citty, once its command line has passed the checks above. */
export async function runStrictly(path: CommandPath): Promise<void> {
  const { command, rest } = path;
  const name = path.names.join(' ');
  const subCommands = Object.keys((await resolved(command.subCommands)) ?? {});
  if (subCommands.length > 0 && rest.length > 0) {
    // findCommand stopped at a word that names no subcommand.
    const what = rest[0]!.startsWith('-') ? `flag ${rest[0]}` : `command ${JSON.stringify(rest[0])}`;
    throw new CliError(`unknown ${what} for ${name}: expected one of ${subCommands.join(', ')} (see ${name} --help)`, 2);
  }
  const args = (await resolved(command.args)) ?? {};
  const flag = positionalAsFlag(rest, args);
  if (flag !== undefined) throw new CliError(`unknown flag ${flag} for ${name} (see ${name} --help)`, 2);
  const strict: CittyPlugin = { name: 'strict-arguments', setup: (context) => checkParsed(context.args, args, path) };
  await runCommand({ ...command, plugins: [...(command.plugins ?? []), strict] }, { rawArgs: rest });
}
