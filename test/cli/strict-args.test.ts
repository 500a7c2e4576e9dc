// Issue 31 item 4: the CLI parses a command line once (citty's parser) and checks that parse against
// the command's definition: an unknown flag, a flag without its value or a word too many is refused
// in one line with exit 2 before anything is done. The real `svc` binary, pointed at an HTTP server
// that counts what reaches it: nothing may.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli } from './support/run-cli.js';

let server: Server;
let requests = 0;
/** `--server` and `--token` for the admin commands, so that a line that got through would be sent here. */
let admin: string[];

before(async () => {
  server = createServer((_request, response) => {
    requests += 1;
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  admin = ['--server', `127.0.0.1:${(server.address() as AddressInfo).port}`, '--token', 'test-admin-token'];
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function refused(line: string[], stderr: string): Promise<void> {
  const run = await runCli(line);
  assert.equal(run.stderr, stderr, line.join(' '));
  assert.equal(run.code, 2, line.join(' '));
  assert.equal(run.stdout, '', line.join(' '));
}

test('an unknown flag is refused, whatever its form', async () => {
  await refused(['refresh', 'http://example.test/a', ...admin, '--dry-run'], 'svc: unknown flag --dry-run for svc refresh (see svc refresh --help)\n');
  await refused(['inspect', 'http://example.test/a', ...admin, '--verbose=1'], 'svc: unknown flag --verbose for svc inspect (see svc inspect --help)\n');
  await refused(['config', 'validate', 'svc.yaml', '-q'], 'svc: unknown flag -q for svc config validate (see svc config validate --help)\n');
  // citty reads `--no-<name>` as <name> = false; a flag that takes a value has no such form.
  await refused(['top', '--once', ...admin, '--no-server'], 'svc: unknown flag --no-server for svc top (see svc top --help)\n');
  // citty keeps positional arguments under their names and `_`: a flag of such a name would vanish from its parse.
  await refused(['refresh', 'http://example.test/a', ...admin, '--url=http://example.test/b'], 'svc: unknown flag --url for svc refresh (see svc refresh --help)\n');
  await refused(['ban', 'surrogate_key=x', '--_', ...admin], 'svc: unknown flag --_ for svc ban (see svc ban --help)\n');
  // A word of short flags gives each letter as one: `_` among them broke citty's parse.
  await refused(['purge', 'http://example.test/a', '-a_', ...admin], 'svc: unknown flag -a_ for svc purge (see svc purge --help)\n');
  await refused(['sim', '--seed', '3', 'run'], 'svc: unknown flag --seed for svc sim: expected one of list, run, seeds (see svc sim --help)\n');
  assert.equal(requests, 0);
});

test('a flag without its value is refused, and an empty value is no value', async () => {
  await refused(['ready', ...admin, '--wait'], 'svc: --wait needs a value (see svc ready --help)\n');
  await refused(['top', '--once', ...admin, '--interval'], 'svc: --interval needs a value (see svc top --help)\n');
  await refused(['purge', 'http://example.test/a', ...admin, '--token='], 'svc: --token needs a value (see svc purge --help)\n');
  await refused(['serve', '--config'], 'svc: --config needs a value (see svc serve --help)\n');
  assert.equal(requests, 0);
});

test('a word more than the command takes is refused', async () => {
  await refused(['inspect', 'http://example.test/a', 'http://example.test/b', ...admin], 'svc: unexpected argument "http://example.test/b": svc inspect takes 1 argument (see svc inspect --help)\n');
  await refused(['config', 'validate', 'a.yaml', 'b.yaml'], 'svc: unexpected argument "b.yaml": svc config validate takes 1 argument (see svc config validate --help)\n');
  await refused(['bans', 'all', ...admin], 'svc: unexpected argument "all": svc bans takes no arguments (see svc bans --help)\n');
  // After `--` every word is an argument.
  await refused(['undrain', ...admin, '--', '--force'], 'svc: unexpected argument "--force": svc undrain takes no arguments (see svc undrain --help)\n');
  assert.equal(requests, 0);
});

test("citty's own checks, made while it parses, come first and name the command", async () => {
  await refused(['refresh', ...admin, '--dry-run'], 'svc: Missing required positional argument: URL (see svc refresh --help)\n');
  await refused(['bans', ...admin, '--output'], 'svc: Invalid value for argument: --output (). Expected one of: text, json. (see svc bans --help)\n');
  assert.equal(requests, 0);
});

test('a line the definition allows runs: flags in any order, and citty’s camelCase spelling of a flag', async () => {
  const json = await runCli(['version', '--output', 'json']);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(typeof JSON.parse(json.stdout).version, 'string');
  // `--pidFile` is citty's spelling of `--pid-file`: accepted, so the line fails only on the missing file.
  const serve = await runCli(['serve', '--pidFile', 'svc.pid', '--config', '/nonexistent/svc.yaml']);
  assert.equal(serve.code, 1);
  assert.match(serve.stderr, /^svc: .*\/nonexistent\/svc\.yaml/);
  assert.doesNotMatch(serve.stderr, /unknown flag/);
});
