// Issue 30 item 7: every command's help names it in full, as it is typed (`svc config validate`,
// not `config validate`), read from the help a user gets from the CLI as a child process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mainCommand } from '../../src/cli/cli.js';
import { allCommands, describeCommandTree } from '../../src/cli/command-tree.js';
import { runCli } from './support/run-cli.js';

test('the help of every nested command shows the whole command, as of the root and a top-level one', async () => {
  // The nested ones are where citty names only the direct parent; the others stand for the rest.
  const commands = allCommands(await describeCommandTree(mainCommand)).filter((command) => command.path.length !== 1 || command.path[0] === 'top');
  assert.ok(commands.filter((command) => command.path.length > 1).length >= 5, 'the tree has nested commands');
  // One after another: many CLI processes at once starve a small machine.
  for (const command of commands) {
    const run = await runCli([...command.path, '--help']);
    assert.equal(run.code, 0, run.stderr);
    const full = ['svc', ...command.path].join(' ');
    const usage = /^USAGE (.*)$/m.exec(run.stdout)?.[1] ?? '';
    assert.ok(usage === full || usage.startsWith(`${full} `), `${full} --help: ${JSON.stringify(usage)}`);
    assert.ok(run.stdout.includes(`(${full} v`), `${full} --help names it in its first line: ${run.stdout.split('\n')[0]}`);
  }
});

test('a command with subcommands points at their help by their whole names', async () => {
  const run = await runCli(['cluster', '--help']);
  assert.match(run.stdout, /^Use svc cluster <command> --help for more information about a command\.$/m);
});
