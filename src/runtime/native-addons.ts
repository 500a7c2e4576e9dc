// Makes the native addons svc depends on load in the Node that runs `npm install`'s scripts.
//
// Why: the repository's Node is the development dependency `node` (24), but npm builds an addon
// with node-gyp against the headers its configuration names (`nodedir`, which machines set up for
// the system Node point at that Node's headers), so an addon compiled from source at install (re2,
// which cannot download its prebuilt binary here) is built for the system Node and refuses to load
// in Node 24 (NODE_MODULE_VERSION). lmdb ships an N-API build and loads in both. This runs as the
// last step of `prepare`: each addon that does not load is rebuilt for the running Node, against
// its own headers (the `node` package carries them), and checked again.
// Usage: node dist/src/runtime/native-addons.js
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The addons svc loads, by package name. */
const ADDONS = ['re2', 'lmdb'] as const;

const require = createRequire(import.meta.url);

/** Loads `name` in a fresh process of this Node; the error's first line when it fails. */
function loadError(name: string): string | undefined {
  const result = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(name)})`], { encoding: 'utf8', cwd: process.cwd() });
  if (result.status === 0) return undefined;
  return (result.stderr.split('\n').find((line) => /Error|error:/.test(line)) ?? `exit ${result.status}`).trim();
}

/** A directory with this Node's C++ headers (`include/node`), as node-gyp's --nodedir wants it. */
function nodeHeaders(): string | undefined {
  const candidates = [dirname(dirname(realpathSync(process.execPath)))];
  try {
    const arch = `node-${process.platform}-${process.arch}`;
    candidates.push(dirname(require.resolve(`${arch}/package.json`, { paths: [dirname(require.resolve('node/package.json'))] })));
  } catch {
    // Not the npm `node` package: the Node's own prefix is the only candidate.
  }
  return candidates.find((dir) => existsSync(join(dir, 'include', 'node', 'node_version.h')));
}

/** node-gyp as npm runs it (npm sets `npm_config_node_gyp` for lifecycle scripts). */
function nodeGyp(): string | undefined {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm !== undefined && existsSync(fromNpm)) return fromNpm;
  const execPath = process.env.npm_execpath;
  const bundled = execPath === undefined ? undefined : join(dirname(dirname(execPath)), 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  return bundled !== undefined && existsSync(bundled) ? bundled : undefined;
}

function rebuild(name: string): void {
  const headers = nodeHeaders();
  const gyp = nodeGyp();
  if (headers === undefined || gyp === undefined) {
    throw new Error(`${name} does not load in Node ${process.version}, and ${headers === undefined ? "this Node's headers" : 'node-gyp'} cannot be found to rebuild it`);
  }
  console.warn(`svc: rebuilding ${name} for Node ${process.version} (about two minutes on two cores)`);
  const packageDir = dirname(require.resolve(`${name}/package.json`));
  // npm hands its own `nodedir` to scripts as npm_config_nodedir, which node-gyp prefers to the flag.
  const env = { ...process.env, npm_config_nodedir: headers };
  const built = spawnSync(process.execPath, [gyp, 'rebuild', '-j', 'max', `--nodedir=${headers}`], { cwd: packageDir, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) throw new Error(`rebuilding ${name} for Node ${process.version} failed (node-gyp exit ${built.status})`);
}

for (const name of ADDONS) {
  if (loadError(name) === undefined) continue;
  rebuild(name);
  const still = loadError(name);
  if (still !== undefined) {
    console.error(`svc: ${name} still does not load in Node ${process.version}: ${still}`);
    process.exit(1);
  }
}
