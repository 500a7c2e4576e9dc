// examples/grafana/svc-dashboard.json (issue 19 item 4): it parses, and every PromQL expression in
// it names only metrics svc exports, with only labels those metrics carry (or the target labels
// Prometheus adds), so the dashboard never shows an empty panel because of a typo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SPEC_METRICS, SVC_EXTRA_METRICS, type ExportedMetric } from '../support/svc-metrics.js';

const DASHBOARD = fileURLToPath(new URL('../../../examples/grafana/svc-dashboard.json', import.meta.url));
/** Labels Prometheus adds to every series it scrapes. */
const TARGET_LABELS = ['instance', 'job'];
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
const EXPORTED = new Map<string, ExportedMetric>([...SPEC_METRICS, ...SVC_EXTRA_METRICS].map((m) => [m.name, m]));

interface Panel {
  title?: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

/** The metric a series name belongs to, and the labels its samples carry. */
function resolve(series: string): { metric: ExportedMetric; labels: string[] } | undefined {
  const direct = EXPORTED.get(series);
  if (direct) return { metric: direct, labels: [...direct.labels] };
  const suffix = /_(bucket|sum|count)$/.exec(series);
  const histogram = suffix ? EXPORTED.get(series.slice(0, suffix.index)) : undefined;
  if (!histogram || histogram.type !== 'histogram') return undefined;
  return { metric: histogram, labels: suffix![1] === 'bucket' ? [...histogram.labels, 'le'] : [...histogram.labels] };
}

/** Checks one PromQL expression; returns the problems found. */
function check(expr: string): string[] {
  const problems: string[] = [];
  const text = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\$\{?\w+\}?/g, ' ');
  const namedLabels = new Set<string>(TARGET_LABELS);
  for (const [, name, matchers] of text.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g)) {
    const found = resolve(name!);
    if (!found) continue; // reported below with every other name
    for (const [, label] of matchers!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) {
      if (![...found.labels, ...TARGET_LABELS].includes(label!)) problems.push(`${name} has no label ${label}`);
    }
  }
  const bare = text.replace(/\{[^}]*\}/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  const grouping = [...bare.matchAll(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g)].flatMap(([, list]) => list!.split(',').map((l) => l.trim()));
  const names = [...bare.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ').matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)]
    .filter(([name, , call]) => call === undefined && !KEYWORDS.has(name!.toLowerCase()))
    .map(([name]) => name!);
  if (names.length === 0) problems.push(`no metric in ${expr}`);
  for (const name of names) {
    const found = resolve(name);
    if (!found) problems.push(`${name} is not a metric svc exports`);
    else for (const label of found.labels) namedLabels.add(label);
  }
  for (const label of grouping) if (label !== '' && !namedLabels.has(label)) problems.push(`grouping by ${label}, which ${names.join(', ')} lack`);
  return problems;
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

test('the Grafana dashboard parses and queries only metrics and labels svc exports', async () => {
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as {
    panels: Panel[];
    templating: { list: { name: string; query?: unknown }[] };
  };
  const panels = allPanels(dashboard.panels).filter((panel) => panel.type !== 'row');
  const expressions = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: panel.title ?? '?', expr: target.expr })));
  assert.ok(expressions.length >= 20, 'every panel has its queries');
  for (const panel of panels) assert.ok((panel.targets ?? []).length > 0, `${panel.title ?? '?'} has a query`);
  const problems = expressions.flatMap(({ where, expr }) => check(expr).map((problem) => `${where}: ${problem}`));
  for (const variable of dashboard.templating.list) {
    const query = (variable.query as { query?: string } | undefined)?.query;
    const labelValues = query === undefined ? undefined : /^label_values\((\w+),\s*(\w+)\)$/.exec(query);
    if (query !== undefined) assert.ok(labelValues, `variable ${variable.name}: ${query}`);
    if (labelValues && !resolve(labelValues[1]!)) problems.push(`variable ${variable.name}: ${labelValues[1]} is not exported`);
  }
  assert.deepEqual(problems, []);

  // What the panels must cover (issue 19 item 4).
  const all = expressions.map((e) => e.expr).join('\n');
  for (const needed of [
    'cache_result=~"HIT|STALE"',
    'sum by (cache_result) (rate(svc_requests_total',
    'sum by (source) (rate(svc_requests_total',
    'histogram_quantile(0.99, sum by (le) (rate(svc_request_duration_seconds_bucket',
    'svc_hot_store_bytes',
    'svc_warm_store_bytes',
    'svc_hot_store_evictions_total',
    'svc_cluster_mode_info',
    'svc_cluster_invalidations_http_total',
    'svc_cluster_invalidations_gossip_total',
    'svc_cdn_purge_total',
  ]) {
    assert.ok(all.includes(needed), `a panel queries ${needed}`);
  }
});

test('the dashboard check finds what is wrong', () => {
  assert.deepEqual(check('rate(svc_requests_total[5m])'), []);
  assert.deepEqual(check('rate(svc_request_total[5m])'), ['svc_request_total is not a metric svc exports']);
  assert.deepEqual(check('sum by (zone) (rate(svc_requests_total[5m]))'), ['grouping by zone, which svc_requests_total lack']);
  assert.deepEqual(check('svc_hot_store_bytes{route="a"}'), ['svc_hot_store_bytes has no label route']);
  assert.deepEqual(check('histogram_quantile(0.5, sum by (le) (rate(svc_request_duration_seconds_bucket[1m])))'), []);
  assert.deepEqual(check('svc_request_duration_seconds_total'), ['svc_request_duration_seconds_total is not a metric svc exports']);
});
