import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { fixturePath } from './fixture-path.js';

const runner = fileURLToPath(new URL('./fixtures/run-config-command.js', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `svc config <args>` in a child process, killed if it outlives the test's bound. */
function runConfigCommand(args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runner, ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-config-command-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('validate prints ok and exits 0 for a valid file', async () => {
  const file = fixturePath('full.yaml');
  const outcome = await runConfigCommand(['validate', file]);
  assert.deepEqual(outcome, { code: 0, stdout: `ok: ${file}\n`, stderr: '' });
});

test('validate prints every problem on stderr, one per line, and exits 1', async () => {
  const file = join(dir, 'bad.yaml');
  await writeFile(
    file,
    [
      'admin: { listen: "9000" }',
      'pools: [{ name: p, upstreams: ["http://127.0.0.1:8081", "ftp://x"] }]',
      'routes:',
      '  - { name: a, pool: p }',
      '  - { name: b, pool: p }',
      '  - { name: c, pool: p, cache: { ttl_override: 30 seconds, colour: red } }',
      '',
    ].join('\n'),
  );
  const outcome = await runConfigCommand(['validate', file]);
  assert.equal(outcome.code, 1);
  assert.equal(outcome.stdout, '');
  assert.deepEqual(outcome.stderr.trimEnd().split('\n'), [
    'admin.listen: expected host:port, got "9000"',
    'pools[0].upstreams[1]: expected an http(s)://host:port URL, got "ftp://x"',
    'routes[2].cache.colour: unknown key "colour" at routes[2].cache (allowed: enabled, ttl_override, stale_while_revalidate, stale_if_error, max_error_ttl)',
    'routes[2].cache.ttl_override: expected a duration like "30s", got "30 seconds"',
  ]);
});

test('validate reports a missing file and exits 1', async () => {
  const file = join(dir, 'absent.yaml');
  const outcome = await runConfigCommand(['validate', file]);
  assert.deepEqual(outcome, { code: 1, stdout: '', stderr: `cannot read configuration file ${file}: no such file\n` });
});

test('schema prints the JSON Schema, pretty', async () => {
  const outcome = await runConfigCommand(['schema']);
  assert.equal(outcome.code, 0);
  assert.equal(outcome.stderr, '');
  const schema = JSON.parse(outcome.stdout) as { properties: Record<string, unknown>; additionalProperties: unknown };
  assert.equal(schema.additionalProperties, false);
  assert.ok('routes' in schema.properties);
  assert.ok(outcome.stdout.startsWith('{\n  "'), 'indented by two spaces');
});
