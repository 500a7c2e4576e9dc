import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { failureLines, reportJson } from '../../sim/report.js';
import { InvalidScenarioOptionsError, runScenario, UnknownScenarioError } from '../../sim/runner.js';
import { SCENARIOS } from '../../sim/scenarios/index.js';

describe('scenarios', () => {
  test('the same scenario, options and seed give a byte-identical JSON report', async () => {
    const first = reportJson((await runScenario('crash-detection', { nodes: 12, seed: 5 })).result);
    const second = reportJson((await runScenario('crash-detection', { nodes: 12, seed: 5 })).result);
    const other = reportJson((await runScenario('crash-detection', { nodes: 12, seed: 6 })).result);
    assert.equal(second, first);
    assert.notEqual(other, first);
  });

  test('a small crash is detected by every survivor and the report says so', async () => {
    const { result } = await runScenario('crash-detection', { nodes: 10, seed: 3 });
    const everyone = result.checks.find((check) => check.name === 'every survivor declares the crashed node dead');
    assert.equal(everyone?.passed, true, everyone?.detail);
    const p50 = result.figures.find((figure) => figure.name === 'declared dead p50')?.value;
    assert.ok(typeof p50 === 'number' && p50 > 0);
  });

  test('join converges a small cluster and charts the share of nodes that know everyone', async () => {
    const { result } = await runScenario('join', { nodes: 10, seed: 2 });
    assert.equal(result.checks[0]?.passed, true, result.checks[0]?.detail);
    const series = result.chart.series[0];
    assert.equal(series?.points.at(-1)?.[1], 1);
  });

  test('both halves of a healed partition find each other again within the stated bound', async () => {
    // Without the reconnect loop each side keeps the other dead forever: nothing sends to dead members.
    const { result } = await runScenario('partition-heal', { nodes: 20, seed: 2, durationS: 60 });
    assert.deepEqual(failureLines(result), []);
    assert.equal(result.figures.find((figure) => figure.name === 'sides split at the heal (1 = yes)')?.value, 1);
  });

  test('every broadcast reaches every node of 100', async () => {
    const { result } = await runScenario('broadcast', { nodes: 100, seed: 1 });
    assert.deepEqual(failureLines(result), []);
  });

  test('every registered scenario has a unique name', () => {
    const names = SCENARIOS.map((scenario) => scenario.name);
    assert.equal(new Set(names).size, names.length);
    for (const expected of ['join', 'crash-detection', 'false-positives', 'broadcast', 'partition-heal', 'faults']) {
      assert.ok(names.includes(expected), expected);
    }
  });

  test('rejects unknown scenarios and bad options', async () => {
    await assert.rejects(runScenario('nope'), UnknownScenarioError);
    await assert.rejects(runScenario('join', { nodes: 1 }), InvalidScenarioOptionsError);
    await assert.rejects(runScenario('join', { seed: Number.NaN }), InvalidScenarioOptionsError);
    await assert.rejects(runScenario('join', { durationS: -1 }), InvalidScenarioOptionsError);
  });
});
