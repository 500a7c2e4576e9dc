import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { failureLines, passed, replayCommand, reportJson, reportTable } from '../../sim/report.js';
import type { ScenarioResult } from '../../sim/scenario.js';
import { percentile, roundTo } from '../../sim/stats.js';
import { renderSvgChart } from '../../sim/svg-chart.js';

function result(overrides: Partial<ScenarioResult> = {}): ScenarioResult {
  return {
    scenario: 'crash-detection',
    options: { nodes: 100, seed: 7 },
    figures: [{ name: 'detection_p50', value: 1234.56789, unit: 'ms' }],
    checks: [{ name: 'every node has it dead', passed: true, detail: '99 of 99' }],
    chart: {
      title: 'Share of nodes that know of the failure',
      xLabel: 'time after the crash (s)',
      yLabel: 'share of nodes',
      yMax: 1,
      series: [{ name: 'know dead', points: [[0, 0], [1.5, 0.5], [3, 1]] }],
    },
    simulatedMs: 60000.0001,
    events: 12345,
    ...overrides,
  };
}

describe('stats', () => {
  test('percentile is nearest-rank and null for no values', () => {
    assert.equal(percentile([], 50), null);
    assert.equal(percentile([5], 99), 5);
    assert.equal(percentile([4, 1, 3, 2], 50), 2);
    assert.equal(percentile([4, 1, 3, 2], 75), 3);
    assert.equal(percentile(Array.from({ length: 100 }, (_, i) => i + 1), 99), 99);
    assert.equal(percentile([4, 1, 3, 2], 100), 4);
  });

  test('roundTo rounds and never yields negative zero', () => {
    assert.equal(roundTo(1.23456, 3), 1.235);
    assert.ok(Object.is(roundTo(-0.0001, 3), 0));
  });
});

describe('report', () => {
  test('JSON sorts keys, rounds numbers and carries the verdict and replay command', () => {
    const json = reportJson(result());
    const parsed = JSON.parse(json) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), [...Object.keys(parsed)].sort());
    assert.equal(parsed.passed, true);
    assert.equal(parsed.replay, 'svc sim run crash-detection --nodes 100 --seed 7');
    assert.equal(parsed.simulatedMs, 60000);
    assert.match(json, /"value": 1234\.568/);
    assert.equal(reportJson(result()), json);
  });

  test('a failed check names the seed and the replay command in the table and the failure lines', () => {
    const failed = result({
      options: { nodes: 10, seed: 42, durationS: 30 },
      checks: [{ name: 'no false positives', passed: false, detail: '2 healthy nodes declared dead' }],
    });
    assert.equal(passed(failed), false);
    assert.equal(replayCommand(failed), 'svc sim run crash-detection --nodes 10 --seed 42 --duration 30');
    const [line] = failureLines(failed);
    assert.ok(line?.includes('seed 42'));
    assert.ok(line?.includes('svc sim run crash-detection --nodes 10 --seed 42 --duration 30'));
    const table = reportTable(failed, 1500);
    assert.ok(table.includes('FAIL'));
    assert.ok(table.includes('wall time 1.50 s'));
    assert.ok(table.includes(line ?? 'missing'));
    assert.ok(!reportJson(failed).includes('wall'));
  });

  test('the SVG chart has one polyline per series, axis labels and escaped text', () => {
    const chart = result().chart;
    chart.series.push({ name: 'a <b> & c', points: [[0, 1], [3, 0]] });
    const svg = renderSvgChart(chart);
    assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
    assert.equal(svg.match(/<polyline /g)?.length, 2);
    assert.ok(svg.includes('time after the crash (s)'));
    assert.ok(svg.includes('share of nodes'));
    assert.ok(svg.includes('a &lt;b&gt; &amp; c'));
    assert.ok(!svg.includes('a <b>'));
    assert.equal(renderSvgChart(chart), svg);
  });
});
