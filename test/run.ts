// Finds every compiled test file and hands the list to Node's test runner. Node 20 and Node 22+
// disagree on how `node --test <dir>` is read, so the files are listed explicitly.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
/** Every file's process loads it: a file that leaves a handle open fails, naming it, instead of hanging. */
const exitWatch = ['--import', new URL('./support/exit-watch.js', import.meta.url).href];
const only = process.argv.slice(2);

function findTests(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTests(path);
    return entry.name.endsWith('.test.js') ? [path] : [];
  });
}

const files = findTests(root)
  .filter((file) => only.length === 0 || only.some((part) => relative(root, file).includes(part)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${only.join(' ')}`);
  process.exit(1);
}

/** Runs `suiteFiles` in a pass of their own with `env` added; its exit status (0 when there is none to run). */
function extraPass(title: string, suiteFiles: string[], env: Record<string, string>): number {
  if (suiteFiles.length === 0) return 0;
  console.log(`# ${title}`);
  const pass = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...exitWatch, ...suiteFiles], { stdio: 'inherit', env: { ...process.env, ...env } });
  const status = pass.status ?? 1;
  if (status !== 0) console.log(`# (${title}: failed, exit ${status})`);
  return status;
}

const under = (suites: readonly string[]): string[] => files.filter((file) => suites.some((suite) => relative(root, file).startsWith(suite)));

// Extra passes first, so that the closing summary printed last is the whole suite's:
// - the data plane's suites on the plain hit path (SVC_NODE_INTERNALS=off, see
//   src/runtime/node-internals.ts), so both paths answer the same;
// - the caching, invalidation, fill and clustering suites with one data-plane thread (SVC_TEST_WORKERS,
//   test/support/svc-harness.ts), while the whole suite runs on the default, one thread per core:
//   a node answers the same however many threads serve it. The multi-node scenarios of e2e/ (about
//   three minutes of test time: partitions, frozen nodes, catch-up) run on the default only: what a
//   thread count changes in a cluster is the node's own wiring, which clustering/ covers with one
//   thread (peer fetch, invalidation delivery, leases) and node/workers/ with several.
// - the caching suites over HTTP/2 (SVC_TEST_PROTOCOL, test/support/test-protocol.ts): each node
//   terminates TLS and the suites' client speaks h2, so an h2 client gets what an HTTP/1.1 one gets;
//   tests that need HTTP/1.1 bytes on the wire are skipped there, each saying why.
const extraStatus = [
  extraPass('proxy/ and http-caching/ on the plain hit path (SVC_NODE_INTERNALS=off)', under(['proxy/', 'http-caching/']), { SVC_NODE_INTERNALS: 'off' }),
  extraPass('http-caching/, invalidation/, fill/ and clustering/ with one data-plane thread (SVC_TEST_WORKERS=1)', under(['http-caching/', 'invalidation/', 'fill/', 'clustering/']), { SVC_TEST_WORKERS: '1' }),
  extraPass('http-caching/ over HTTP/2 on a TLS data plane (SVC_TEST_PROTOCOL=h2)', under(['http-caching/']), { SVC_TEST_PROTOCOL: 'h2' }),
].find((status) => status !== 0);
console.log('# the whole suite, with the default configuration (one data-plane thread per core)');
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...exitWatch, ...files], { stdio: 'inherit' });
process.exit(extraStatus ?? result.status ?? 1);
