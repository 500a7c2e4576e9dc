import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
function runConfigCommand(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const childEnv = { ...process.env, SVC_ADMIN_TOKEN: '', ...env };
    const child = spawn(process.execPath, [runner, ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000, env: childEnv });
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

test('validate prints ok and exits 0 for a valid file whose files and directories are usable', async () => {
  // The fixture sets every key; its TLS files and directories are moved to places that exist here.
  const file = join(dir, 'full.yaml');
  const text = (await readFile(fixturePath('full.yaml'), 'utf8')).replace(/\/etc\/svc\//g, `${dir}/`).replace(/\/var\/(cache|lib)\/svc/g, `${dir}/$1`);
  for (const name of ['node.crt', 'node.key', 'ca.crt']) await writeFile(join(dir, name), 'PEM\n');
  await writeFile(file, text);
  const outcome = await runConfigCommand(['validate', file]);
  assert.deepEqual(outcome, { code: 0, stdout: `ok: ${file}\n`, stderr: '' });
});

test('validate checks the files and directories the file names, naming each key and cause', async () => {
  const file = join(dir, 'files.yaml');
  const notADirectory = join(dir, 'plain-file');
  await writeFile(notADirectory, 'x');
  await writeFile(join(dir, 'cert.pem'), 'PEM\n');
  await writeFile(
    file,
    `warm: { path: ${JSON.stringify(join(notADirectory, 'warm'))}, max_bytes: 1000000 }\n` +
      `hop_limit: 1\ncluster: { node_name: a, insecure: true, tls: { cert: ${JSON.stringify(join(dir, 'cert.pem'))}, key: ${JSON.stringify(join(dir, 'missing.key'))}, ca: ${JSON.stringify(dir)} } }\n` +
      'pools: [{ name: o, upstreams: ["http://127.0.0.1:1"] }]\nroutes: [{ name: all, pool: o }]\n',
  );
  const outcome = await runConfigCommand(['validate', file]);
  assert.equal(outcome.code, 1);
  assert.deepEqual(outcome.stderr.trimEnd().split('\n'), [
    `warm.path: cannot use ${JSON.stringify(join(notADirectory, 'warm'))} as a writable directory: ${notADirectory} is not a directory`,
    `cluster.tls.key: cannot read ${JSON.stringify(join(dir, 'missing.key'))}: no such file or directory (ENOENT)`,
    `cluster.tls.ca: cannot read ${JSON.stringify(dir)}: it is not a regular file`,
  ]);
});

test('validate applies the rule of admin.token to SVC_ADMIN_TOKEN', async () => {
  const file = join(dir, 'token.yaml');
  await writeFile(file, 'pools: [{ name: o, upstreams: ["http://127.0.0.1:1"] }]\nroutes: [{ name: all, pool: o }]\n');
  const outcome = await runConfigCommand(['validate', file], { SVC_ADMIN_TOKEN: 'abc' });
  assert.equal(outcome.code, 1);
  assert.equal(outcome.stderr, 'SVC_ADMIN_TOKEN: expected a string of at least 16 characters (the rule of admin.token), got a string of 3 characters\n');
  assert.ok(!outcome.stderr.includes('abc'), 'the token itself is not echoed');
  assert.equal((await runConfigCommand(['validate', file], { SVC_ADMIN_TOKEN: 'a-token-of-16-chars' })).code, 0);
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
