// Finds every compiled test file and hands the list to Node's test runner. Node 20 and Node 22+
// disagree on how `node --test <dir>` is read, so the files are listed explicitly.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
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

// The data plane's suites run a second time on the plain hit path (SVC_NODE_INTERNALS=off, see
// src/node/node-internals.ts), so both paths answer the same; first, so that the closing summary
// printed last is the whole suite's.
const PLAIN_PATH_SUITES = ['proxy/', 'http-caching/'];
const plainPathFiles = files.filter((file) => PLAIN_PATH_SUITES.some((suite) => relative(root, file).startsWith(suite)));
let plainStatus = 0;
if (plainPathFiles.length > 0) {
  console.log(`# ${PLAIN_PATH_SUITES.join(' and ')} on the plain hit path (SVC_NODE_INTERNALS=off)`);
  const plain = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...plainPathFiles], {
    stdio: 'inherit',
    env: { ...process.env, SVC_NODE_INTERNALS: 'off' },
  });
  plainStatus = plain.status ?? 1;
  console.log(`# the whole suite${plainStatus === 0 ? '' : ` (the plain hit path run failed: exit ${plainStatus})`}`);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(plainStatus !== 0 ? plainStatus : (result.status ?? 1));
