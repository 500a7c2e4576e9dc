// The command a command line names: its leading words followed down the citty command tree
// (`svc config validate x.yaml` names `svc config validate`). The help shown and the command run are
// both found here, so `--help` describes exactly what the same line without it would run.
import type { CommandDef, Resolvable } from 'citty';

/** A part of a citty definition, which may be given as a value, a promise or a function of either. */
export async function resolved<T>(value: Resolvable<T> | undefined): Promise<T | undefined> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : await value;
}

export interface CommandPath {
  command: CommandDef;
  /** How messages and help name the command: `['svc', 'config', 'validate']`. */
  names: string[];
  /** The words after its name: its arguments, or, under a command with subcommands, a word naming none. */
  rest: string[];
}

/** Follows the leading words while each names a subcommand of the last; stops at the first that does not. */
export async function findCommand(root: CommandDef, rawArgs: readonly string[]): Promise<CommandPath> {
  let command = root;
  const names = [(await resolved(root.meta))?.name ?? 'svc'];
  let index = 0;
  for (; index < rawArgs.length; index++) {
    const subCommands = (await resolved(command.subCommands)) ?? {};
    const word = rawArgs[index]!;
    if (!Object.hasOwn(subCommands, word)) break;
    command = (await resolved(subCommands[word])) as CommandDef;
    names.push(word);
  }
  return { command, names, rest: rawArgs.slice(index) };
}
