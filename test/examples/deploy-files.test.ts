// Issue 21 item 9: the systemd unit and the container file of examples/ are checked. The unit by
// `systemd-analyze verify` where systemd's tools exist (with svc's path pointed at this build), and
// for what it must hold (reload, readiness, hardening); the container file by dockerfile-utils' linter
// and for what it must hold (an unprivileged user, a health check, exec-form commands, files that
// exist, the ports its configuration listens on). Both configurations validate. Issue 30 item 8: the
// container's one base image is pinned by digest, and the image is built where a container tool can
// build (skipped, saying which tool was found and why it cannot, elsewhere); the unit's readiness check
// takes the admin address from the environment (file) rather than spelling it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validate } from 'dockerfile-utils';
import { parseConfigText } from '../../src/config/index.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const UNIT = join(REPO, 'examples', 'systemd', 'svc.service');
const CONTAINERFILE = join(REPO, 'examples', 'container', 'Containerfile');

/** `Key=value` settings of a unit file, per section, in order (a key may repeat). */
function unitSettings(text: string): Map<string, [string, string][]> {
  const sections = new Map<string, [string, string][]>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      sections.set(section, []);
      continue;
    }
    const equals = line.indexOf('=');
    sections.get(section)!.push([line.slice(0, equals), line.slice(equals + 1)]);
  }
  return sections;
}

/** Instructions of a Containerfile: keyword and arguments, continuation lines joined. */
function instructions(text: string): { keyword: string; args: string }[] {
  const joined = text.replace(/\\\n\s*/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const space = line.indexOf(' ');
      return { keyword: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() };
    });
}

describe('examples/systemd/svc.service', () => {
  const text = readFileSync(UNIT, 'utf8');
  const service = new Map(unitSettings(text).get('Service'));

  test('reloads with SIGHUP, waits for readiness, follows an upgrade, stops with SIGTERM, and is hardened', () => {
    assert.equal(service.get('Type'), 'exec');
    assert.equal(service.get('ExecReload'), '/bin/kill -HUP $MAINPID');
    assert.match(service.get('ExecStart')!, /^\/usr\/local\/bin\/svc serve --config \/etc\/svc\/svc\.yaml --pid-file \/run\/svc\/svc\.pid$/);
    // An upgrade (SIGUSR2) moves the main process: systemd follows it through the file svc writes.
    assert.equal(service.get('PIDFile'), '/run/svc/svc.pid');
    assert.equal(service.get('RuntimeDirectory'), 'svc');
    assert.match(service.get('ExecStartPost')!, /^\/usr\/local\/bin\/svc ready --wait \d+s --server \$\{SVC_ADMIN_SERVER\}$/);
    assert.equal(service.get('KillSignal'), 'SIGTERM');
    for (const [key, value] of Object.entries({
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      DynamicUser: 'yes',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      CapabilityBoundingSet: '',
      SystemCallFilter: '@system-service',
    })) {
      assert.equal(service.get(key), value, key);
    }
    assert.ok(!service.has('MemoryDenyWriteExecute'), "V8's JIT needs writable, executable memory");
    assert.equal(service.get('StateDirectory'), 'svc');
  });

  test('its configuration validates, and ExecStartPost asks the admin address it listens on, which the environment file may set', () => {
    const config = parseConfigText(readFileSync(join(REPO, 'examples', 'systemd', 'svc.yaml'), 'utf8'), 'svc.yaml');
    // Every Environment= line, then the environment file, which overrides them (systemd.exec(5)).
    const settings = unitSettings(text).get('Service')!;
    const defaults = settings.filter(([key]) => key === 'Environment').map(([, value]) => value);
    assert.deepEqual(defaults, [`SVC_ADMIN_SERVER=${config.admin.listen}`], 'the default is the configuration\'s admin.listen');
    assert.deepEqual(settings.filter(([key]) => key === 'EnvironmentFile').map(([, value]) => value), ['-/etc/svc/env']);
    assert.ok(config.warm?.path.startsWith('/var/lib/svc/'), 'the warm tier is in the StateDirectory, the only writable place');
  });

  test('systemd-analyze verify accepts it', async (context) => {
    if (spawnSync('systemd-analyze', ['--version']).status !== 0) {
      context.skip('systemd-analyze is not installed here');
      return;
    }
    // verify checks that the commands exist: svc's path is pointed at this build.
    const dir = await mkdtemp(join(tmpdir(), 'svc-unit-'));
    try {
      const svc = join(dir, 'svc');
      await writeFile(svc, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(REPO, 'dist', 'src', 'cli', 'main.js'))} "$@"\n`);
      await chmod(svc, 0o755);
      const unit = join(dir, 'svc.service');
      await writeFile(unit, text.replaceAll('/usr/local/bin/svc', svc));
      const result = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8', timeout: 60_000 });
      const about = `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.includes('svc.service'));
      assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
      assert.deepEqual(about, [], 'no warning about the unit (unknown keys are only warned about)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('examples/container/Containerfile', () => {
  const text = readFileSync(CONTAINERFILE, 'utf8');
  const steps = instructions(text);
  const finalStage = steps.slice(steps.findLastIndex((step) => step.keyword === 'FROM'));

  test('the Dockerfile linter finds nothing', () => {
    assert.deepEqual(
      validate(text).map((diagnostic) => `line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`),
      [],
    );
  });

  test('one base image pinned by digest for both stages, compilers in the build stage only', () => {
    const base = steps.filter((step) => step.keyword === 'ARG' && step.args.startsWith('NODE_IMAGE='));
    assert.equal(base.length, 1, 'one ARG names the base image');
    assert.match(base[0]!.args, /^NODE_IMAGE=node:\d+-[a-z]+-slim@sha256:[0-9a-f]{64}$/, 'a versioned tag and its digest');
    const froms = steps.filter((step) => step.keyword === 'FROM');
    assert.deepEqual(
      froms.map((from) => from.args.split(/\s+/)[0]),
      froms.map(() => '${NODE_IMAGE}'),
      'every stage starts from the pinned image',
    );
    const installs = steps.filter((step) => step.keyword === 'RUN' && step.args.includes('apt-get install'));
    assert.equal(installs.length, 1);
    assert.ok(steps.indexOf(installs[0]!) < steps.indexOf(finalStage[0]!), 'compilers are installed in the build stage');
    for (const name of ['build-essential', 'python3']) assert.ok(installs[0]!.args.includes(name), name);
    const engines = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const imageMajor = Number(/node:(\d+)-/.exec(base[0]!.args)![1]);
    assert.ok(imageMajor >= Number(/(\d+)\./.exec(engines)![1]), `node ${imageMajor} meets engines ${engines}`);
  });

  test("the package's tarball is named by npm pack, never spelled in the file", () => {
    const pack = steps.find((step) => step.keyword === 'RUN' && step.args.includes('npm pack'))!;
    assert.match(pack.args, /tarball="\$\(npm pack --ignore-scripts\)"/);
    assert.match(pack.args, /npm install --global --prefix \/opt\/svc --omit=dev "\.\/\$\{tarball\}"/);
    assert.doesNotMatch(text, /\.tgz/);
    // What the build relies on: npm pack's standard output is the tarball's name and nothing else.
    const { name, version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string; version: string };
    const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--dry-run'], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
    assert.equal(packed.status, 0, packed.stderr);
    assert.equal(packed.stdout, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz\n`);
  });

  test('an unprivileged user, a health check, exec-form commands, a volume for the warm tier', () => {
    const user = finalStage.filter((step) => step.keyword === 'USER').at(-1);
    assert.ok(user && user.args !== 'root' && user.args !== '0', 'the final stage runs unprivileged');
    for (const keyword of ['ENTRYPOINT', 'CMD']) assert.match(finalStage.find((step) => step.keyword === keyword)!.args, /^\[".*"\]$/, `${keyword} in exec form`);
    assert.match(finalStage.find((step) => step.keyword === 'HEALTHCHECK')!.args, /CMD \[".*", "ready"/);
    assert.equal(finalStage.find((step) => step.keyword === 'STOPSIGNAL')?.args, 'SIGTERM');
    assert.ok(finalStage.some((step) => step.keyword === 'VOLUME' && step.args.includes('/var/lib/svc')));
    assert.ok(!steps.some((step) => step.keyword === 'ADD'), 'COPY, never ADD (no remote URLs, no auto-extraction)');
  });

  test('what it copies from the build context exists, and it exposes the ports its configuration listens on', () => {
    for (const copy of steps.filter((step) => step.keyword === 'COPY' && !step.args.startsWith('--from'))) {
      const sources = copy.args.split(/\s+/).slice(0, -1);
      for (const source of sources) assert.ok(existsSync(join(REPO, source)), `COPY ${source}`);
    }
    const config = parseConfigText(readFileSync(join(REPO, 'examples', 'container', 'svc.yaml'), 'utf8'), 'svc.yaml');
    const exposed = finalStage.find((step) => step.keyword === 'EXPOSE')!.args.split(/\s+/).sort();
    assert.deepEqual(exposed, [config.listen, config.admin.listen].map((address) => address.split(':').at(-1)!).sort());
    assert.ok(finalStage.find((step) => step.keyword === 'HEALTHCHECK')!.args.includes(`127.0.0.1:${config.admin.listen.split(':').at(-1)}`));
    assert.ok(config.warm?.path.startsWith('/var/lib/svc/'), 'the warm tier is on the volume');
    const ignored = readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist']) assert.ok(ignored.includes(entry), `.dockerignore leaves out ${entry}`);
  });

  test('builds, and the image runs svc', async (context) => {
    const tool = usableContainerTool();
    if (typeof tool === 'string') {
      context.skip(tool);
      return;
    }
    const image = `localhost/svc-example-test:${process.pid}`;
    try {
      const build = spawnSync(tool.name, ['build', '--file', CONTAINERFILE, '--tag', image, REPO], { encoding: 'utf8', timeout: 30 * 60_000 });
      assert.equal(build.status, 0, `${tool.name} build:\n${build.stdout}${build.stderr}`.slice(-8000));
      const version = spawnSync(tool.name, ['run', '--rm', image, 'version'], { encoding: 'utf8', timeout: 120_000 });
      const { version: expected } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
      assert.equal(version.status, 0, `${version.stdout}${version.stderr}`);
      assert.ok(version.stdout.includes(expected), version.stdout);
    } finally {
      spawnSync(tool.name, ['rmi', '--force', image], { timeout: 120_000 });
    }
  });
});

/**
 * The container tool that can build here, or why none can: a tool is usable when its client is
 * installed and `<tool> info` reaches its engine (docker's client without a daemon cannot build).
 */
function usableContainerTool(): { name: string } | string {
  const reasons: string[] = [];
  for (const name of ['docker', 'podman']) {
    const info = spawnSync(name, ['info'], { encoding: 'utf8', timeout: 30_000 });
    if (info.error !== undefined && (info.error as NodeJS.ErrnoException).code === 'ENOENT') continue;
    if (info.status === 0) return { name };
    const why = `${info.stderr ?? ''}`.split('\n').find((line) => line.trim() !== '') ?? `exit status ${info.status}`;
    reasons.push(`${name} is installed but \`${name} info\` fails, so it cannot build: ${why.trim()}`);
  }
  return reasons.length === 0 ? 'no container tool: neither docker nor podman is installed' : reasons.join('; ');
}
