// Every RFC requirement of rfc-requirements.ts is proved by a test case in this directory, and the
// count of them is printed in the test run's output (a diagnostic line under this test):
// "RFC requirements covered: N MUST, M SHOULD".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NOT_APPLICABLE, R, type Requirement } from './rfc-requirements.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The text of this directory's test files (compiled, beside this one), except this file. */
async function testSources(): Promise<string> {
  const self = fileURLToPath(import.meta.url);
  const names = (await readdir(here)).filter((name) => /\.test\.[jt]s$/.test(name) && join(here, name) !== self);
  const texts = await Promise.all(names.map((name) => readFile(join(here, name), 'utf8')));
  return texts.join('\n');
}

function isMust(requirement: Requirement): boolean {
  return requirement.level === 'MUST' || requirement.level === 'MUST NOT';
}

test('every catalogued RFC requirement is proved by a named test case, and the count is printed', async (t) => {
  const sources = await testSources();
  const keys = Object.keys(R) as (keyof typeof R)[];
  // A test case proves a requirement through requirement(R.<key>, …); a key nobody uses is not covered.
  const unproved = keys.filter((key) => !new RegExp(`\\bR\\.${key}\\b`).test(sources));
  assert.deepEqual(unproved, [], 'requirements without a test case');

  const requirements: Requirement[] = keys.map((key) => R[key]);
  const byRfc = new Map<string, { must: number; should: number }>();
  for (const requirement of requirements) {
    const rfc = requirement.id.split(' ')[0] as string;
    const counts = byRfc.get(rfc) ?? { must: 0, should: 0 };
    if (isMust(requirement)) counts.must++;
    else counts.should++;
    byRfc.set(rfc, counts);
  }
  const must = requirements.filter(isMust).length;
  t.diagnostic(`RFC requirements covered: ${must} MUST, ${requirements.length - must} SHOULD`);
  for (const [rfc, counts] of [...byRfc].sort()) t.diagnostic(`  ${rfc}: ${counts.must} MUST, ${counts.should} SHOULD`);
  t.diagnostic(`not applicable to svc (docs/http-caching.md): ${NOT_APPLICABLE.length}`);
  assert.ok(must > 0);
});

test('each requirement is named once: two entries never claim the same requirement', () => {
  const names = Object.values(R).map((requirement) => `${requirement.id} ${requirement.level} ${requirement.text}`);
  assert.equal(new Set(names).size, names.length);
});
