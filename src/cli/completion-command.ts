// `svc completion bash|zsh|fish` (spec §4.2): prints a completion script for the command tree the
// CLI really has. The root is passed in as a function because this command is part of that tree.
import { defineCommand, type CommandDef } from 'citty';
import { CliError } from './cli-error.js';
import { describeCommandTree } from './command-tree.js';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './completion-scripts.js';
import { withPositionals } from './positionals.js';

function isShell(value: string): value is CompletionShell {
  return (COMPLETION_SHELLS as readonly string[]).includes(value);
}

export function createCompletionCommand(getRoot: () => CommandDef) {
  const command = defineCommand({
    meta: { name: 'completion', description: 'print a shell completion script (bash, zsh or fish)' },
    args: { shell: { type: 'positional', required: true, description: COMPLETION_SHELLS.join(', '), valueHint: COMPLETION_SHELLS.join('|') } },
    async run({ args }) {
      if (!isShell(args.shell)) throw new CliError(`unknown shell ${JSON.stringify(args.shell)}: expected ${COMPLETION_SHELLS.join(', ')}`, 2);
      const root = getRoot();
      const tree = await describeCommandTree(root);
      process.stdout.write(completionScript(args.shell, tree));
    },
  });
  withPositionals(command, { values: COMPLETION_SHELLS });
  return command;
}
