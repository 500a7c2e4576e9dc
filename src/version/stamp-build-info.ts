// Run after `tsc` by `npm run build`: records the commit and build date that `GET /version` and
// `svc version` report. Outside a git checkout (a tarball install) the commit is "unknown".
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

const target = fileURLToPath(new URL('../../build-info.json', import.meta.url));
writeFileSync(target, JSON.stringify({ commit: gitCommit(), date: new Date().toISOString() }) + '\n');
