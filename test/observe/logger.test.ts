// The process logger's standard-output destination batches lines (nginx's access_log buffer/flush):
// a lone line still reaches stdout while the process runs on, every line logged before an exit is
// written, and batching never splits, merges or reorders lines. Each case runs the real logger in a
// child process, since the destination is the process's own stdout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const LOGGER = fileURLToPath(new URL('../../src/observe/logger.js', import.meta.url));

/** Runs `body` in a child with `logger` in scope; resolves once `done(stdout)` holds, or after the child exits. */
function runLogging(body: string, done: (stdout: string) => boolean): Promise<{ stdout: string; exited: boolean }> {
  const script = `const { createLogger } = await import(${JSON.stringify(LOGGER)}); const logger = createLogger(); ${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let exited = false;
    // Bounded: a line held back forever fails the test instead of hanging it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out; stdout so far: ${JSON.stringify(stdout)}`));
    }, 10_000);
    const finish = (): void => {
      clearTimeout(timer);
      if (!exited) child.kill('SIGKILL');
      resolve({ stdout, exited });
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (done(stdout)) finish();
    });
    child.on('exit', () => {
      exited = true;
      finish();
    });
  });
}

const lines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('a lone line reaches stdout while the process keeps running', async () => {
  const { stdout, exited } = await runLogging(`logger.info({ n: 1 }, 'alone'); setInterval(() => {}, 1000);`, (out) => out.includes('\n'));
  assert.equal(exited, false, 'the line was written by the periodic flush, not by an exit');
  const [line] = lines(stdout);
  assert.equal(line?.msg, 'alone');
  assert.equal(line?.n, 1);
});

test('every line logged before process.exit is written', async () => {
  const { stdout, exited } = await runLogging(
    `for (let n = 0; n < 3; n++) logger.warn({ n }, 'before exit'); process.exit(0);`,
    () => false,
  );
  assert.equal(exited, true);
  assert.deepEqual(lines(stdout).map((line) => [line.msg, line.n, line.level]), [
    ['before exit', 0, 'warn'],
    ['before exit', 1, 'warn'],
    ['before exit', 2, 'warn'],
  ]);
});

test('a burst of lines arrives whole and in order', async () => {
  const count = 2000;
  const { stdout } = await runLogging(
    `for (let n = 0; n < ${count}; n++) logger.info({ n, pad: 'x'.repeat(n % 300) }, 'burst'); setInterval(() => {}, 1000);`,
    (out) => out.split('\n').length > count,
  );
  const written = lines(stdout);
  assert.equal(written.length, count);
  written.forEach((line, n) => {
    assert.equal(line.n, n);
    assert.equal(line.pad, 'x'.repeat(n % 300));
  });
});
