// The `svc` command tree and its runner (spec §4.2). A failure prints one line on stderr and exits non-zero:
// 2 for a usage error (unknown command, missing or bad argument), 1 for anything else.
import { stripVTControlCharacters } from 'node:util';
import { defineCommand, renderUsage, runCommand, type CommandDef } from 'citty';
import { banCommand } from './ban-command.js';
import { bansCommand } from './bans-command.js';
import { clusterCommand } from './cluster-command.js';
import { createCompletionCommand } from './completion-command.js';
import { purgeCommand } from './purge-command.js';
import { refreshCommand } from './refresh-command.js';
import { reloadCommand } from './reload-command.js';
import { undrainCommand } from './undrain-command.js';
import { inspectCommand } from './inspect-command.js';
import { readyCommand } from './ready-command.js';
import { topCommand } from './top-command.js';
import { ConfigError, formatConfigIssue } from '../config/index.js';
import { ListenError } from '../node/listeners.js';
import { buildInfo } from '../version/build-info.js';
import { CliError } from './cli-error.js';
import { forStream } from './colour.js';
import { checkArguments } from './strict-args.js';
import { configCommand } from './config-command.js';
import { serveCommand } from './serve-command.js';
import { simCommand } from './sim-command.js';
import { versionCommand } from './version-command.js';

// Annotated: the completion command reads the tree it belongs to.
export const mainCommand: CommandDef = defineCommand({
  meta: { name: 'svc', version: buildInfo().version, description: 'edge cache service' },
  subCommands: {
    serve: serveCommand,
    config: configCommand,
    version: versionCommand,
    purge: purgeCommand,
    ban: banCommand,
    bans: bansCommand,
    refresh: refreshCommand,
    reload: reloadCommand,
    undrain: undrainCommand,
    top: topCommand,
    inspect: inspectCommand,
    ready: readyCommand,
    cluster: clusterCommand,
    sim: simCommand,
    completion: createCompletionCommand(() => mainCommand),
  },
});

/**
 * The command a `--help` applies to (the deepest subcommand named on the command line), and the
 * parent citty names it under. citty prefixes only its direct parent's name, so a nested command's
 * parent is given as the whole path above it: `svc config validate`, not `config validate`.
 */
async function helpTarget(rawArgs: readonly string[]): Promise<[CommandDef, CommandDef | undefined]> {
  const root = mainCommand as CommandDef;
  let command = root;
  const path: string[] = [];
  for (const arg of rawArgs) {
    if (arg.startsWith('-')) break;
    const subCommands = (typeof command.subCommands === 'function' ? await command.subCommands() : await command.subCommands) ?? {};
    const next = subCommands[arg];
    if (!next) break;
    path.push(arg);
    command = (typeof next === 'function' ? await (next as () => Promise<CommandDef>)() : next) as CommandDef;
  }
  if (path.length === 0) return [command, undefined];
  const rootMeta = await (typeof root.meta === 'function' ? root.meta() : root.meta);
  const parentName = [rootMeta?.name ?? 'svc', ...path.slice(0, -1)].join(' ');
  return [command, { meta: { name: parentName, version: rootMeta?.version } }];
}

function describeFailure(error: unknown): { lines: string[]; exitCode: number } {
  if (error instanceof CliError) return { lines: error.message.split('\n'), exitCode: error.exitCode };
  if (error instanceof ConfigError) return { lines: error.issues.map(formatConfigIssue), exitCode: 1 };
  // Named like a configuration problem: the key to change, then what the system said.
  if (error instanceof ListenError && error.key !== undefined) return { lines: [`${error.key}: ${error.message}`], exitCode: 1 };
  if (error instanceof Error && error.name === 'CLIError') {
    // citty's usage errors; its message may carry terminal colour codes.
    return { lines: [`${stripVTControlCharacters(error.message)} (see svc --help)`], exitCode: 2 };
  }
  return { lines: [error instanceof Error ? error.message : String(error)], exitCode: 1 };
}

export async function runCli(rawArgs: string[]): Promise<void> {
  try {
    if (rawArgs.length === 0 || rawArgs.includes('--help') || rawArgs.includes('-h')) {
      const usage = await renderUsage(...(await helpTarget(rawArgs)));
      process.stdout.write(`${forStream(usage, process.stdout)}\n\n`);
      return;
    }
    if (rawArgs.length === 1 && rawArgs[0] === '--version') {
      console.log(buildInfo().version);
      return;
    }
    await checkArguments(mainCommand, rawArgs);
    await runCommand(mainCommand, { rawArgs });
  } catch (error) {
    const { lines, exitCode } = describeFailure(error);
    for (const line of lines) console.error(`svc: ${line}`);
    process.exitCode = exitCode;
  }
}
