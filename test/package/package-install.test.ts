// Issues 21 item 1 and 30 item 1: svc as a user installs it, under its package name. The package is
// packed with `npm pack` and installed into an empty temporary project with `npm install <tarball>`,
// which unpacks it, links its `svc` command into node_modules/.bin and checks its dependencies. Those
// dependencies are not fetched: a real install compiles re2 for minutes, and the registry may be out
// of reach. Each declared runtime dependency is linked beforehand from this repository's node_modules,
// so npm finds them satisfied and stays offline (`--offline`), and only what package.json declares is
// there: a dependency used but not declared fails here. Every export in package.json is imported, the
// CLI runs from node_modules/.bin, a TypeScript file importing the client, the wire types, the cluster
// library and the UDP transport is typechecked and run against a live node started from the installed
// package, and the cluster-kv example, importing only the package's `/cluster` and `/transports/udp`,
// runs with two members.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LIBP2P_PACKAGES } from '../../src/clustering/libp2p-packages.js';
import { startTestOrigin } from '../support/test-origin.js';
import { freePort } from '../../bench/support/free-port.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw } from '../support/http.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const TOKEN = 'package-test-token-0123456789';

interface PackedFile {
  path: string;
}

interface PackageJson {
  name: string;
  version: string;
  license: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, string | Record<string, string>>;
  bin: Record<string, string>;
  main: string;
  types: string;
}

function run(command: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Links `names` from this repository's node_modules into `project`'s, as npm would have installed them. */
async function linkFromRepository(project: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const link = join(project, 'node_modules', name);
    await mkdir(dirname(link), { recursive: true });
    await symlink(join(REPO, 'node_modules', name), link, 'dir');
  }
}

/** The relative links of a Markdown text (images included), without their #fragment. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!.split('#')[0]!)
    .filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** A child process whose stdout is read line by line. */
class LineProcess {
  private readonly lines: string[] = [];
  private waiter: (() => void) | undefined;
  stderr = '';

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.lines.push(line);
      this.waiter?.();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  /** The first unread line matching `pattern`, read lines before it dropped. */
  async next(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.lines.findIndex((line) => pattern.test(line));
      if (index >= 0) return this.lines.splice(0, index + 1).at(-1)!;
      const left = deadline - Date.now();
      if (left <= 0 || this.child.exitCode !== null) assert.fail(`no line matching ${pattern} (stderr: ${this.stderr})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }
}

const PACKAGE = 'svc-edge-cache';

const CONSUMER = `import { AdminApiError, createAdminClient, type StatsResponse, type VersionResponse } from '${PACKAGE}';
import { createClusterMember, systemClock, type ClusterMember } from '${PACKAGE}/cluster';
import { createUdpTransport } from '${PACKAGE}/transports/udp';

const [server] = process.argv.slice(2);
const client = createAdminClient({ server, token: process.env.SVC_ADMIN_TOKEN });
const stats: StatsResponse = await client.stats();
const version: VersionResponse = await client.version();
let refused = '';
try {
  await createAdminClient({ server, token: 'not-the-token' }).stats();
} catch (error) {
  if (error instanceof AdminApiError) refused = error.code;
}
// The cluster library's types are there too (not run: the kv example below runs a cluster).
const unused: ((name: string) => Promise<ClusterMember>) | undefined = undefined;
void [createClusterMember, systemClock, createUdpTransport, unused];
console.log(JSON.stringify({ hotEntries: stats.tiers.hot.entries, version: version.version, refused }));
`;

/** Must not typecheck: proves the types are real rather than \`any\`. */
const MISTYPED = `import { createAdminClient } from '${PACKAGE}';
const status: number = (await createAdminClient().health()).status;
console.log(status);
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    strict: true,
    outDir: 'out',
    skipLibCheck: false,
  },
};

describe('the packed package, installed in another project', () => {
  let work: string;
  let project: string;
  let installed: string;
  let packedFiles: string[];
  let manifest: PackageJson;
  /** The environment the installed `svc` runs in: this Node first on PATH, as its shebang asks for `node`. */
  let env: NodeJS.ProcessEnv;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'svc-package-'));
    const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], REPO);
    assert.equal(pack.status, 0, pack.stderr);
    const [packed] = JSON.parse(pack.stdout) as [{ name: string; filename: string; files: PackedFile[] }];
    assert.equal(packed.name, PACKAGE);
    packedFiles = packed.files.map((file) => file.path);
    project = join(work, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // The declared dependencies, linked (their own dependencies resolve from this repository's
    // node_modules, where the links point); then npm installs the tarball beside them.
    const repositoryManifest = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as PackageJson;
    await linkFromRepository(project, Object.keys(repositoryManifest.dependencies));
    const install = run(
      'npm',
      ['install', join(work, packed.filename), '--no-save', '--no-package-lock', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'],
      project,
    );
    assert.equal(install.status, 0, install.stdout + install.stderr);
    installed = join(project, 'node_modules', PACKAGE);
    manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as PackageJson;
    // The consumer's TypeScript types, after npm, which removes what no package.json asks for.
    await linkFromRepository(project, ['@types/node']);
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  test('ships what users need and nothing else', () => {
    const unwanted = packedFiles.filter(
      (path) =>
        // The dashboard's script and style sheet are read from the source tree at startup.
        (/^(test|bench|examples|src|cluster|transports|sim)\//.test(path) && !path.startsWith('src/admin/dashboard/assets/')) ||
        /^dist\/(test|bench|examples)\//.test(path) ||
        path.endsWith('.map') ||
        path.endsWith('.tsbuildinfo') ||
        /\.(pem|key|crt)$/.test(path) ||
        (path.endsWith('.ts') && !path.endsWith('.d.ts')),
    );
    assert.deepEqual(unwanted, []);
    for (const wanted of [
      'package.json',
      'README.md',
      'LICENSE',
      'docs/openapi.yaml',
      'docs/operations.md',
      'dist/build-info.json',
      'dist/src/cli/main.js',
      'dist/src/index.d.ts',
      'src/admin/dashboard/assets/dashboard.js',
    ]) {
      assert.ok(packedFiles.includes(wanted), `${wanted} is shipped`);
    }
  });

  test('the licence the package declares ships in full', async () => {
    assert.equal(manifest.license, 'Apache-2.0');
    const licence = await readFile(join(installed, 'LICENSE'), 'utf8');
    assert.match(licence, /^\s*Apache License\s+Version 2\.0, January 2004/);
    assert.match(licence, /END OF TERMS AND CONDITIONS/);
    assert.equal(licence, await readFile(join(REPO, 'LICENSE'), 'utf8'));
  });

  test('every relative link in the shipped Markdown, the README links to docs/ among them, resolves inside the package', async () => {
    const markdown = packedFiles.filter((path) => path.endsWith('.md'));
    assert.ok(markdown.includes('README.md') && markdown.includes('docs/admin-api.md'), markdown.join(', '));
    const broken: string[] = [];
    let links = 0;
    for (const file of markdown) {
      for (const target of relativeLinks(await readFile(join(installed, file), 'utf8'))) {
        links++;
        if (!existsSync(join(installed, dirname(file), decodeURIComponent(target)))) broken.push(`${file} → ${target}`);
      }
    }
    assert.deepEqual(broken, []);
    assert.ok(links > 20, `${links} relative links read`);
  });

  test('every entry point and the bin exist in the package as built', () => {
    const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin)];
    for (const [entry, target] of Object.entries(manifest.exports)) {
      if (typeof target === 'string') targets.push(target);
      else targets.push(...Object.values(target));
      assert.ok(entry === '.' || entry === './package.json' || entry.startsWith('./'), entry);
    }
    for (const entry of ['.', './cluster', './transports/udp', './transports/libp2p']) assert.ok(entry in manifest.exports, `exports ${entry}`);
    const missing = targets.filter((target) => !existsSync(join(installed, target)));
    assert.deepEqual(missing, []);
  });

  test('the libp2p packages are optional peer dependencies, and only they are', () => {
    assert.deepEqual(Object.keys(manifest.peerDependencies).sort(), [...LIBP2P_PACKAGES].sort());
    for (const name of LIBP2P_PACKAGES) {
      assert.equal(manifest.peerDependenciesMeta[name]?.optional, true, name);
      assert.ok(!(name in manifest.dependencies), `${name} is not a hard dependency`);
    }
  });

  test('the svc command runs from node_modules/.bin of the project, without the libp2p packages', () => {
    assert.deepEqual(Object.keys(manifest.bin), ['svc']);
    const svc = join(project, 'node_modules', '.bin', 'svc');
    const version = run(svc, ['--version'], project, env);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), manifest.version);
    const versionCommand = run(svc, ['version'], project, env);
    assert.equal(versionCommand.status, 0, versionCommand.stderr);
    assert.match(versionCommand.stdout, new RegExp(`^svc ${manifest.version.replaceAll('.', '\\.')} \\(commit `));
    const help = run(svc, ['--help'], project, env);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /svc serve/);
    const sim = run(svc, ['sim', 'list'], project, env);
    assert.equal(sim.status, 0, sim.stderr);
    // Importing the libp2p entry without its packages fails at once, naming a missing package.
    const libp2p = run(process.execPath, ['--input-type=module', '-e', `await import('${PACKAGE}/transports/libp2p')`], project);
    assert.notEqual(libp2p.status, 0);
    assert.match(libp2p.stderr, /ERR_MODULE_NOT_FOUND|Cannot find package '(@libp2p|@multiformats|libp2p)/);
  });

  test('a TypeScript consumer typechecks, and calls a live node through the client', { timeout: 120_000 }, async () => {
    const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
    await writeFile(join(project, 'consumer.ts'), CONSUMER);
    await writeFile(join(project, 'mistyped.ts'), MISTYPED);
    // One run (tsc emits despite errors): the only error is the mistyped use, which proves the types
    // are real rather than `any`; svc's own declarations are checked too (skipLibCheck: false).
    const compiled = run(process.execPath, [tsc, '-p', '.'], project);
    const errors = compiled.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    assert.equal(errors.length, 1, compiled.stdout + compiled.stderr);
    assert.match(errors[0]!, /^mistyped\.ts.*error TS2322/);

    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'x' }));
    const [dataPort, adminPort] = [await freePort(), await freePort()];
    const config = join(project, 'svc.yaml');
    await writeFile(
      config,
      `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\npools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n`,
    );
    const node = spawn(process.execPath, [join(installed, manifest.bin.svc!), 'serve', '--config', config], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN },
    });
    let nodeErrors = '';
    node.stderr.setEncoding('utf8').on('data', (chunk: string) => (nodeErrors += chunk));
    try {
      await eventually(
        'the installed svc ready',
        async () => (await fetchRaw(`http://127.0.0.1:${adminPort}/readyz`)).status,
        (status) => {
          assert.equal(node.exitCode, null, `the installed svc exited before it was ready: ${nodeErrors}`);
          return status === 200;
        },
        { timeoutMs: 15_000, everyMs: 100, tolerateErrors: true, detail: () => nodeErrors },
      );
      await fetchRaw(`http://127.0.0.1:${dataPort}/one`);
      const call = spawnSync(process.execPath, [join(project, 'out', 'consumer.js'), `127.0.0.1:${adminPort}`], {
        cwd: project,
        encoding: 'utf8',
        env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN },
        timeout: 30_000,
      });
      assert.equal(call.status, 0, call.stderr);
      assert.deepEqual(JSON.parse(call.stdout), { hotEntries: 1, version: manifest.version, refused: 'invalid_token' });
    } finally {
      node.kill('SIGTERM');
      if (node.exitCode === null) await once(node, 'exit');
      await origin.close();
    }
  });

  test('the cluster-kv example runs on svc-edge-cache/cluster and svc-edge-cache/transports/udp with two members', { timeout: 120_000 }, async () => {
    const example = join(project, 'kv');
    await mkdir(example);
    for (const file of ['kv-node.ts', 'main.ts']) {
      const source = await readFile(join(REPO, 'examples', 'cluster-kv', file), 'utf8');
      const rewritten = source.replace("'../../cluster/index.js'", `'${PACKAGE}/cluster'`).replace("'../../transports/udp/index.js'", `'${PACKAGE}/transports/udp'`);
      assert.doesNotMatch(rewritten, /from '\.\.\//, `${file} imports only the package (and its own files)`);
      await writeFile(join(example, file), rewritten);
    }
    // The declarations were checked above; here only the example's own code is.
    const options = { ...TSCONFIG.compilerOptions, skipLibCheck: true };
    await writeFile(join(example, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, include: ['*.ts'] }));
    const compiled = run(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], example);
    assert.equal(compiled.status, 0, compiled.stdout + compiled.stderr);

    const [portA, portB] = [await freePort(), await freePort()];
    const start = (args: string[]): LineProcess =>
      new LineProcess(spawn(process.execPath, [join(example, 'out', 'main.js'), ...args], { cwd: example, stdio: ['pipe', 'pipe', 'pipe'] }));
    const a = start(['a', `127.0.0.1:${portA}`]);
    const b = start(['b', `127.0.0.1:${portB}`, `127.0.0.1:${portA}`]);
    try {
      await a.next(/^a listening on /);
      await b.next(/^b listening on /);
      b.send('set colour blue');
      assert.match(await b.next(/^ok|^error/), /^ok \(owner [ab]\)$/);
      a.send('get colour');
      assert.equal(await a.next(/^"|^null|^error/), '"blue"');
      a.send('members');
      const members = [await a.next(/ alive$| suspect$| dead$/), await a.next(/ alive$| suspect$| dead$/)];
      assert.deepEqual(members.map((line) => line.split(' ')[0]).sort(), ['a', 'b']);
      // Listen for both exits before asking: one member may be gone before the other is awaited.
      const exits = [a, b].map((member) => once(member.child, 'exit') as Promise<[number | null]>);
      for (const member of [a, b]) member.send('quit');
      for (const [index, member] of [a, b].entries()) {
        const [code] = await exits[index]!;
        assert.equal(code, 0, member.stderr);
      }
    } finally {
      for (const member of [a, b]) if (member.child.exitCode === null) member.child.kill('SIGKILL');
    }
  });

  // Last: it installs the libp2p packages, which the tests above must not find.
  test('every export in package.json imports, the libp2p transport with its peer packages installed beside it', async () => {
    await linkFromRepository(project, LIBP2P_PACKAGES);
    const specifiers = Object.keys(manifest.exports).map((entry) => (entry === '.' ? PACKAGE : `${PACKAGE}${entry.slice(1)}`));
    assert.ok(specifiers.length >= 5, specifiers.join(', '));
    const script = `const found = {};
for (const specifier of ${JSON.stringify(specifiers)}) {
  const loaded = specifier.endsWith('.json') ? await import(specifier, { with: { type: 'json' } }) : await import(specifier);
  found[specifier] = Object.keys(loaded).filter((name) => name !== 'default').length;
  if (specifier.endsWith('.json')) found[specifier] = loaded.default.name;
}
console.log(JSON.stringify(found));`;
    const imported = run(process.execPath, ['--input-type=module', '-e', script], project);
    assert.equal(imported.status, 0, imported.stderr);
    const found = JSON.parse(imported.stdout) as Record<string, number | string>;
    assert.deepEqual(Object.keys(found), specifiers);
    for (const specifier of specifiers) {
      if (specifier.endsWith('.json')) assert.equal(found[specifier], PACKAGE);
      else assert.ok((found[specifier] as number) > 0, `${specifier} exports something`);
    }
  });
});
