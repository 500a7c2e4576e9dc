// The test runner's guard (test/support/exit-watch.ts): a test file that leaves a handle open fails,
// naming it, instead of keeping `npm test` waiting; a file that closes what it opened is untouched.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

const EXIT_WATCH = new URL('../support/exit-watch.js', import.meta.url).href;

const LEAKS_AFTER_FAILED_SETUP = `
import { test } from 'node:test';
import { createServer } from 'node:net';
test('setup throws before its try', async () => {
  createServer().listen(0, '127.0.0.1');
  throw new Error('the node did not start');
});
`;
const LEAKS_AND_PASSES = `
import { test } from 'node:test';
import { createServer } from 'node:net';
test('passes, and leaves its server listening', () => { createServer().listen(0, '127.0.0.1'); });
`;
const CLOSES_WHAT_IT_OPENS = `
import { test } from 'node:test';
import { createServer } from 'node:net';
test('closes its server', async () => {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.close(resolve));
});
`;

/** How long a fixture may take in all; the guard is given 1 s of it. */
const BOUND_MS = 30_000;

async function runFile(dir: string, name: string, source: string): Promise<{ code: number | null; output: string; ms: number }> {
  const file = join(dir, name);
  await writeFile(file, source);
  const started = Date.now();
  // A run of its own, not a file of this one's (node:test marks its children with NODE_TEST_CONTEXT).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(process.execPath, ['--test', '--import', EXIT_WATCH, file], { env: { ...env, SVC_TEST_EXIT_GRACE_MS: '1000' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const bound = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(bound);
  return { code, output, ms: Date.now() - started };
}

describe('a test file that does not let its process end', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'svc-exit-watch-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  test('fails, naming what is open, when its setup threw and left a server listening', async () => {
    const run = await runFile(dir, 'failed-setup.test.mjs', LEAKS_AFTER_FAILED_SETUP);
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /still runs 1 s after its tests ended; still open: .*TCPServerWrap/);
    assert.ok(run.ms < BOUND_MS, 'ended by the guard, not by the bound');
  });

  test('fails when every test passed but one left its server listening', async () => {
    const run = await runFile(dir, 'leak.test.mjs', LEAKS_AND_PASSES);
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /TCPServerWrap/);
    assert.match(run.output, /ℹ pass 1/);
  });

  test('leaves a file that closes what it opened to end on its own, passing', async () => {
    const run = await runFile(dir, 'clean.test.mjs', CLOSES_WHAT_IT_OPENS);
    assert.equal(run.code, 0, run.output);
    assert.doesNotMatch(run.output, /still runs/);
  });
});
