// Issue 4 item 6: `svc completion bash|zsh|fish`, generated from the command tree. The bash script is
// loaded into a real bash and asked for completions the way bash asks when Tab is pressed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { defineCommand } from 'citty';
import { describeCommandTree } from '../../src/cli/command-tree.js';
import { completionScript } from '../../src/cli/completion-scripts.js';
import { runCli } from './support/run-cli.js';

/** What the bash script completes for the words typed so far (the last one being completed). */
function bashComplete(script: string, words: string[]): string[] {
  const program = `${script}
COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_svc_completion
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split('\n').filter((line) => line !== '');
}

describe('svc completion', () => {
  test('each shell lists the commands and their flags', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const run = await runCli(['completion', shell]);
      assert.equal(run.code, 0, run.stderr);
      for (const word of ['purge', 'ban', 'refresh', 'version', 'completion', 'token', 'server', 'output', 'file']) {
        assert.ok(run.stdout.includes(word), `${shell} script lacks ${word}`);
      }
    }
    const fish = (await runCli(['completion', 'fish'])).stdout;
    assert.match(fish, /^complete -c svc -n '__fish_seen_subcommand_from purge' -l output -x -a 'text json' /m);
    assert.match(fish, /^complete -c svc -n '__fish_use_subcommand' -f -a purge -d /m);
    const zsh = (await runCli(['completion', 'zsh'])).stdout;
    assert.match(zsh, /^#compdef svc$/m);
    assert.match(zsh, /'purge:purge URLs/);
  });

  test('an unknown shell is a usage error', async () => {
    const run = await runCli(['completion', 'tcsh']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^svc: unknown shell "tcsh": expected bash, zsh, fish\n$/);
  });

  test('the bash script completes commands, flags and enum values in a real bash', async () => {
    const script = (await runCli(['completion', 'bash'])).stdout;
    assert.deepEqual(bashComplete(script, ['svc', '']).sort(), ['ban', 'bans', 'cluster', 'completion', 'config', 'inspect', 'purge', 'ready', 'refresh', 'reload', 'serve', 'sim', 'top', 'undrain', 'version']);
    assert.deepEqual(bashComplete(script, ['svc', 'pu']), ['purge']);
    assert.deepEqual(bashComplete(script, ['svc', 'purge', '--to']), ['--token']);
    assert.deepEqual(bashComplete(script, ['svc', 'purge', '--output', '']), ['text', 'json']);
    assert.deepEqual(bashComplete(script, ['svc', 'ban', '--server', 'localhost:9000', '--o']), ['--output']);
    assert.deepEqual(bashComplete(script, ['svc', '--ver']), ['--version']);
  });

  test('positional words complete too: the shells of svc completion, the fields of svc ban', async () => {
    const script = (await runCli(['completion', 'bash'])).stdout;
    assert.deepEqual(bashComplete(script, ['svc', 'completion', '']), ['bash', 'zsh', 'fish']);
    assert.deepEqual(bashComplete(script, ['svc', 'ban', '']), ['host_regex=', 'path_regex=', 'surrogate_key=']);
    assert.deepEqual(bashComplete(script, ['svc', 'ban', 'surrogate_key=x', 'pa']), ['path_regex=']);
    assert.deepEqual(bashComplete(script, ['svc', 'ban', '--token', 't', 'h']), ['host_regex=']);
    assert.ok(bashComplete(script, ['svc', 'sim', 'run', '']).length > 0, 'scenario names');
    const zsh = (await runCli(['completion', 'zsh'])).stdout;
    assert.match(zsh, /' ban'\) .*values=\('host_regex=' 'path_regex=' 'surrogate_key='\)/);
    assert.match(zsh, /' completion'\) .*values=\('bash' 'zsh' 'fish'\)/);
    const fish = (await runCli(['completion', 'fish'])).stdout;
    assert.match(fish, /^complete -c svc -n '__fish_seen_subcommand_from ban' -f -a 'host_regex= path_regex= surrogate_key='$/m);
    assert.match(fish, /^complete -c svc -n '__fish_seen_subcommand_from completion' -f -a 'bash zsh fish'$/m);
  });

  test('nested subcommands come from the tree it is given', async () => {
    const leaf = defineCommand({ meta: { description: 'leaf' }, args: { deep: { type: 'boolean', description: 'deep flag' } } });
    const root = defineCommand({
      meta: { name: 'svc' },
      subCommands: {
        config: defineCommand({ meta: { description: 'config' }, subCommands: { validate: leaf, schema: () => leaf } }),
        hidden: defineCommand({ meta: { hidden: true } }),
      },
    });
    const script = completionScript('bash', await describeCommandTree(root));
    assert.deepEqual(bashComplete(script, ['svc', '']), ['config']);
    assert.deepEqual(bashComplete(script, ['svc', 'config', '']), ['validate', 'schema']);
    assert.deepEqual(bashComplete(script, ['svc', 'config', 'schema', '--d']), ['--deep']);
  });
});
