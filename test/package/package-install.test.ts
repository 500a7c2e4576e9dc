// Issue 21 item 1: svc as a user installs it. The package is packed with `npm pack`, unpacked into a
// temporary project as npm would install it, and given only its declared runtime dependencies (linked
// from this repository's node_modules, so no registry is needed): a dependency used but not declared
// fails here. A TypeScript file importing the client, the wire types, the cluster library and the UDP
// transport is typechecked and run against a live node started from the installed package, and the
// cluster-kv example, importing only `svc/cluster` and `svc/transports/udp`, runs with two members.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LIBP2P_PACKAGES } from '../../src/clustering/libp2p-packages.js';
import { startTestOrigin } from '../support/test-origin.js';
import { freePort } from '../support/free-port.js';
import { fetchRaw } from '../support/http.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const TOKEN = 'package-test-token-0123456789';

interface PackedFile {
  path: string;
}

interface PackageJson {
  version: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, string | Record<string, string>>;
  bin: Record<string, string>;
  main: string;
  types: string;
}

function run(command: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
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

const CONSUMER = `import { AdminApiError, createAdminClient, type StatsResponse, type VersionResponse } from 'svc';
import { createClusterMember, systemClock, type ClusterMember } from 'svc/cluster';
import { createUdpTransport } from 'svc/transports/udp';

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
const MISTYPED = `import { createAdminClient } from 'svc';
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

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'svc-package-'));
    const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], REPO);
    assert.equal(pack.status, 0, pack.stderr);
    const [packed] = JSON.parse(pack.stdout) as [{ filename: string; files: PackedFile[] }];
    packedFiles = packed.files.map((file) => file.path);
    project = join(work, 'project');
    installed = join(project, 'node_modules', 'svc');
    await mkdir(installed, { recursive: true });
    const untar = run('tar', ['-xzf', join(work, packed.filename), '-C', installed, '--strip-components=1'], work);
    assert.equal(untar.status, 0, untar.stderr);
    manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as PackageJson;
    // What `npm install` would bring: the declared dependencies (their own dependencies resolve
    // from this repository's node_modules, where the links point), and the consumer's TypeScript types.
    for (const name of [...Object.keys(manifest.dependencies), '@types/node']) {
      const link = join(project, 'node_modules', name);
      await mkdir(dirname(link), { recursive: true });
      await symlink(join(REPO, 'node_modules', name), link, 'dir');
    }
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
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
    for (const wanted of ['package.json', 'README.md', 'docs/openapi.yaml', 'dist/build-info.json', 'dist/src/cli/main.js', 'dist/src/index.d.ts', 'src/admin/dashboard/assets/dashboard.js']) {
      assert.ok(packedFiles.includes(wanted), `${wanted} is shipped`);
    }
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

  test('the CLI runs from the installed package, without the libp2p packages', () => {
    const cli = join(installed, manifest.bin.svc!);
    const version = run(process.execPath, [cli, '--version'], project);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), manifest.version);
    const sim = run(process.execPath, [cli, 'sim', 'list'], project);
    assert.equal(sim.status, 0, sim.stderr);
    // Importing the libp2p entry without its packages fails at once, naming a missing package.
    const libp2p = run(process.execPath, ['--input-type=module', '-e', "await import('svc/transports/libp2p')"], project);
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
      for (let i = 0; ; i++) {
        const ready = await fetchRaw(`http://127.0.0.1:${adminPort}/readyz`).catch(() => undefined);
        if (ready?.status === 200) break;
        assert.ok(i < 150 && node.exitCode === null, `the installed svc did not become ready: ${nodeErrors}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
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

  test('the cluster-kv example runs on svc/cluster and svc/transports/udp with two members', { timeout: 120_000 }, async () => {
    const example = join(project, 'kv');
    await mkdir(example);
    for (const file of ['kv-node.ts', 'main.ts']) {
      const source = await readFile(join(REPO, 'examples', 'cluster-kv', file), 'utf8');
      const rewritten = source.replace("'../../cluster/index.js'", "'svc/cluster'").replace("'../../transports/udp/index.js'", "'svc/transports/udp'");
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
});
