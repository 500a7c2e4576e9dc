// The citty command tree resolved into plain data (names, descriptions, flags), for generating shell
// completion from the commands that actually exist rather than from a list kept by hand.
import type { ArgsDef, CommandDef, CommandMeta } from 'citty';
import { resolved } from './command-path.js';
import { positionalRules } from './positionals.js';

export interface FlagInfo {
  /** Long names without dashes, the flag's own name first (then aliases of more than one letter). */
  names: string[];
  /** One-letter aliases, without the dash. */
  shortNames: string[];
  description: string;
  /** True for string and enum flags, which consume the next word. */
  takesValue: boolean;
  /** The allowed values of an enum flag; empty otherwise. */
  values: string[];
}

export interface CommandInfo {
  name: string;
  description: string;
  /** Names from the root's first subcommand down to this one; empty for the root. */
  path: string[];
  subcommands: CommandInfo[];
  flags: FlagInfo[];
  /** Words its positional arguments may be (see positionals.ts); empty when any word goes. */
  positionalValues: string[];
}

function flagsOf(args: ArgsDef): FlagInfo[] {
  const flags: FlagInfo[] = [];
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') continue;
    const alias = 'alias' in def ? def.alias : undefined;
    const aliases: string[] = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    flags.push({
      names: [name, ...aliases.filter((alias) => alias.length > 1)],
      shortNames: aliases.filter((alias) => alias.length === 1),
      description: def.description ?? '',
      takesValue: def.type === 'string' || def.type === 'enum',
      values: def.type === 'enum' ? [...(def.options ?? [])] : [],
    });
  }
  // Every command answers --help (the runner handles it before citty does).
  flags.push({ names: ['help'], shortNames: ['h'], description: 'show help', takesValue: false, values: [] });
  return flags;
}

export async function describeCommandTree(command: CommandDef, name = '', path: string[] = []): Promise<CommandInfo> {
  const meta: CommandMeta = (await resolved(command.meta)) ?? {};
  const subCommandDefs = (await resolved(command.subCommands)) ?? {};
  const subcommands: CommandInfo[] = [];
  for (const [subName, sub] of Object.entries(subCommandDefs)) {
    const subDef = (await resolved(sub)) as CommandDef;
    const subMeta = (await resolved(subDef.meta)) ?? {};
    if (subMeta.hidden) continue;
    subcommands.push(await describeCommandTree(subDef, subName, [...path, subName]));
  }
  return {
    name: name || (meta.name ?? ''),
    description: meta.description ?? '',
    path,
    subcommands,
    flags: [
      ...flagsOf(((await resolved(command.args)) ?? {}) as ArgsDef),
      // The runner answers a lone --version on the root.
      ...(path.length === 0 && meta.version !== undefined
        ? [{ names: ['version'], shortNames: [], description: 'print the version', takesValue: false, values: [] }]
        : []),
    ],
    positionalValues: [...(positionalRules(command).values ?? [])],
  };
}

/** The root and every command below it, depth first. */
export function allCommands(root: CommandInfo): CommandInfo[] {
  return [root, ...root.subcommands.flatMap(allCommands)];
}
