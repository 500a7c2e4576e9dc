// svc's simulator scenarios of issue 16. CI runs a batch of 60 seeds of invalidation-faults (every
// plan several times) and a 1,000-invalidation catch-up; the full runs are documented in
// docs/simulation.md (`svc sim seeds invalidation-faults --from 1 --to 1000`, `svc sim run catch-up`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { failureLines, reportJson } from '../../sim/report.js';
import { runScenario } from '../../sim/runner.js';
import { SCENARIOS } from '../../sim/scenarios/index.js';
import '../../src/clustering/scenarios/index.js';
import { PLANS } from '../../src/clustering/scenarios/invalidation-faults.js';

const CI_SEEDS = 60;

describe('svc invalidation scenarios', () => {
  test(`invalidation-faults: ${CI_SEEDS} seeds, every plan, every check passes`, async () => {
    const failures: string[] = [];
    const plans = new Map<string, number>();
    for (let seed = 1; seed <= CI_SEEDS; seed++) {
      const { result } = await runScenario('invalidation-faults', { seed });
      const plan = result.figures[0]!.name;
      plans.set(plan, (plans.get(plan) ?? 0) + 1);
      failures.push(...failureLines(result));
    }
    assert.deepEqual(failures, [], `failing runs (replay each with its command):\n${failures.join('\n')}`);
    assert.deepEqual([...plans.keys()].sort(), PLANS.map((plan) => `plan: ${plan}`).sort(), 'every plan ran');
  });

  test('invalidation-faults: the same seed gives a byte-identical report', async () => {
    const first = reportJson((await runScenario('invalidation-faults', { seed: 7 })).result);
    assert.equal(reportJson((await runScenario('invalidation-faults', { seed: 7 })).result), first);
  });

  test('catch-up: a node down during 1,000 invalidations has them all before it counts as caught up', async () => {
    const { result } = await runScenario('catch-up', { seed: 3, durationS: 1 });
    assert.deepEqual(failureLines(result), []);
    const applied = result.figures.find((figure) => figure.name === 'invalidations applied by the catch-up')?.value;
    assert.ok(typeof applied === 'number' && applied > 100, `${applied} applied by the catch-up`);
  });

  test('svc registers its scenarios with the simulator, which imports nothing from src/', async () => {
    const names = SCENARIOS.map((scenario) => scenario.name);
    for (const name of ['strong-vs-eventual', 'catch-up', 'invalidation-faults']) assert.ok(names.includes(name), name);
    const simDir = fileURLToPath(new URL('../../../sim/', import.meta.url));
    const sources = (await readdir(simDir, { recursive: true })).filter((file) => file.endsWith('.ts'));
    assert.ok(sources.length > 5);
    for (const file of sources) {
      const text = await readFile(join(simDir, file), 'utf8');
      assert.doesNotMatch(text, /from '(\.\.\/)+src\//, `sim/${file} imports src/`);
    }
  });

  test('the CLI lists svc\'s scenarios and runs one over a range of seeds', () => {
    const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
    const list = spawnSync(process.execPath, [cli, 'sim', 'list'], { encoding: 'utf8' });
    assert.match(list.stdout, /^invalidation-faults\s/m);
    const seeds = spawnSync(process.execPath, [cli, 'sim', 'seeds', 'invalidation-faults', '--from', '2', '--to', '3'], { encoding: 'utf8' });
    assert.equal(seeds.status, 0, seeds.stderr);
    assert.match(seeds.stdout, /^invalidation-faults: seeds 2-3, 2 passed, 0 failed, wall time [\d.]+ s$/m);
    const bad = spawnSync(process.execPath, [cli, 'sim', 'seeds', 'invalidation-faults', '--from', '5', '--to', '1'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
  });
});
