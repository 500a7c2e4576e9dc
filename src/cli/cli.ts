// The `svc` command tree and its runner (spec §4.2). A failure prints one line on stderr and exits non-zero:
// 2 for a usage error (unknown command, missing or bad argument), 1 for anything else.
import { stripVTControlCharacters } from 'node:util';
import { defineCommand, renderUsage, type CommandDef } from 'citty';
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
import { findCommand, resolved, type CommandPath } from './command-path.js';
import { runStrictly } from './strict-args.js';
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
 * The usage of the command `path` names. citty prefixes a command's name with its direct parent's
 * only, so a nested command's parent is given as the whole path above it: `svc config validate`.
 */
async function usage(path: CommandPath): Promise<string> {
  if (path.names.length === 1) return renderUsage(path.command);
  const rootMeta = await resolved(mainCommand.meta);
  return renderUsage(path.command, { meta: { name: path.names.slice(0, -1).join(' '), version: rootMeta?.version } });
}

/** `command` names the command the line is for, in the hint that follows a usage error of citty's own. */
function describeFailure(error: unknown, command: string): { lines: string[]; exitCode: number } {
  if (error instanceof CliError) return { lines: error.message.split('\n'), exitCode: error.exitCode };
  if (error instanceof ConfigError) return { lines: error.issues.map(formatConfigIssue), exitCode: 1 };
  // Named like a configuration problem: the key to change, then what the system said.
  if (error instanceof ListenError && error.key !== undefined) return { lines: [`${error.key}: ${error.message}`], exitCode: 1 };
  if (error instanceof Error && error.name === 'CLIError') {
    // citty's usage errors; its message may carry terminal colour codes.
    return { lines: [`${stripVTControlCharacters(error.message)} (see ${command} --help)`], exitCode: 2 };
  }
  return { lines: [error instanceof Error ? error.message : String(error)], exitCode: 1 };
}

export async function runCli(rawArgs: string[]): Promise<void> {
  let path: CommandPath | undefined;
  try {
    path = await findCommand(mainCommand, rawArgs);
    if (rawArgs.length === 0 || rawArgs.includes('--help') || rawArgs.includes('-h')) {
      process.stdout.write(`${forStream(await usage(path), process.stdout)}\n\n`);
      return;
    }
    if (rawArgs.length === 1 && rawArgs[0] === '--version') {
      console.log(buildInfo().version);
      return;
    }
    await runStrictly(path);
  } catch (error) {
    const { lines, exitCode } = describeFailure(error, path?.names.join(' ') ?? 'svc');
    for (const line of lines) console.error(`svc: ${line}`);
    process.exitCode = exitCode;
  }
}
