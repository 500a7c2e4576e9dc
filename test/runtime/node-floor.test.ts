// The Node floor (src/runtime/node-floor.ts): which versions meet it, and the one line the CLI gives
// a Node below it, run for real with the machine's own Node when that one is older (CI's is 20).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { meetsNodeFloor } from '../../src/runtime/node-floor.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

test('Node 22.12 and later meet the floor; 20 and 22.11 do not', () => {
  assert.deepEqual(
    ['v20.20.2', 'v22.11.0', 'v22.12.0', 'v23.0.0', 'v24.21.0', 'v26.1.0'].map(meetsNodeFloor),
    [false, false, true, true, true, true],
  );
});

test('the CLI on a Node below the floor says so in one line and exits 1', (t) => {
  const system = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  if (system.status !== 0 || meetsNodeFloor(system.stdout.trim())) {
    t.skip('no Node below the floor on this machine (/usr/bin/node)');
    return;
  }
  const run = spawnSync('/usr/bin/node', [CLI, 'version'], { encoding: 'utf8' });
  assert.equal(run.status, 1);
  assert.equal(run.stdout, '');
  const lines = run.stderr.trim().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, /^svc needs Node\.js 22\.12 or newer, and this is v20\./);
});
