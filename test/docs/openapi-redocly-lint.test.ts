// Issue 30 item 4: `redocly lint` with Redocly's recommended rules (redocly.yaml) finds nothing in
// docs/openapi.yaml but what .redocly.lint-ignore.yaml lists with its reasons. The CLI is a dev
// dependency (@redocly/cli, one bundled package) and runs here as a user runs it; it needs no network:
// redocly.yaml turns its usage report off, REDOCLY_TELEMETRY=off says so again for a run without that
// file, and its update notice is off whenever standard error is not a terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const DOCUMENT = 'docs/openapi.yaml';

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string; location: { pointer?: string }[] }[];
}

test('redocly lint (recommended rules) finds no error or warning in docs/openapi.yaml, and every listed exception still applies', () => {
  const run = spawnSync(process.execPath, [join(REPO, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js'), 'lint', DOCUMENT, '--format=json'], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
    timeout: 120_000,
  });
  assert.equal(run.error, undefined);
  const report = JSON.parse(run.stdout) as LintReport;
  const problems = report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer ?? '?'}: ${problem.message}`);
  assert.deepEqual(problems, []);
  assert.deepEqual({ errors: report.totals.errors, warnings: report.totals.warnings }, { errors: 0, warnings: 0 });
  assert.equal(run.status, 0, run.stderr);
  // An exception whose problem is gone would hide the next one at that place: each must still match.
  const exceptions = parse(readFileSync(join(REPO, '.redocly.lint-ignore.yaml'), 'utf8')) as Record<string, Record<string, string[]>>;
  const listed = Object.values(exceptions[DOCUMENT] ?? {}).flat().length;
  assert.equal(report.totals.ignored, listed, 'problems ignored, against exceptions listed in .redocly.lint-ignore.yaml');
});
