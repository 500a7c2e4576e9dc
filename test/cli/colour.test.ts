// Issue 21 item 3: no colour codes where no terminal reads them; NO_COLOR is honoured on a terminal.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { colourWanted, forStream } from '../../src/cli/colour.js';
import { runCli } from './support/run-cli.js';

describe('colour', () => {
  test('help piped to another program has no escape codes, even with NO_COLOR unset', async () => {
    for (const args of [['--help'], ['purge', '--help'], []]) {
      const run = await runCli(args, { env: { NO_COLOR: '' } });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /USAGE/);
      assert.ok(!run.stdout.includes('\x1b['), `${args.join(' ')}: ${JSON.stringify(run.stdout.slice(0, 80))}`);
    }
  });

  test('a terminal gets colour unless NO_COLOR is set (to anything but "") or TERM is dumb', () => {
    const tty = { isTTY: true };
    assert.equal(colourWanted(tty, {}), true);
    assert.equal(colourWanted(tty, { NO_COLOR: '1' }), false);
    assert.equal(colourWanted(tty, { NO_COLOR: 'yes' }), false);
    assert.equal(colourWanted(tty, { NO_COLOR: '' }), true);
    assert.equal(colourWanted(tty, { TERM: 'dumb' }), false);
    assert.equal(colourWanted({ isTTY: false }, {}), false);
    assert.equal(colourWanted({}, {}), false);
    assert.equal(forStream('\x1b[1mbold\x1b[22m', { isTTY: false }, {}), 'bold');
    assert.equal(forStream('\x1b[1mbold\x1b[22m', tty, {}), '\x1b[1mbold\x1b[22m');
  });
});
