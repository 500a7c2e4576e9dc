// Issue 30 item 9: Prometheus refuses a scrape that holds two samples of one name with one label set.
// A real node, in one process (`workers: 1`) and with its default data-plane threads, answers requests
// that differ only in a label some metric does not print (the status, which svc_response_bytes_total
// leaves out by spec §6.5) and in every other label besides; then every sample of both exposition
// formats must be the only one of its name and label set, for every metric the node exports.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { fetchRaw } from '../support/http.js';
import { parseExposition } from '../support/svc-metrics.js';

const OPENMETRICS = 'application/openmetrics-text; version=1.0.0';

/** Samples that share a name and a label set, each named once with how often it was printed. */
function duplicateSamples(text: string): string[] {
  const seen = new Map<string, number>();
  for (const family of parseExposition(text).values()) {
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
        .join(',');
      const key = `${sample.name}{${labels}}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  }
  return [...seen].filter(([, count]) => count > 1).map(([key, count]) => `${key} ×${count}`);
}

/** The OpenMetrics text without its exemplars and `# EOF`, so the Prometheus-format reader parses it. */
function withoutExemplars(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/ # \{.*$/, ''))
    .filter((line) => line !== '# EOF')
    .join('\n');
}

for (const [title, workers] of [
  ['one process (workers: 1)', { workers: 1 }],
  ['the default data-plane threads', {}],
] as const) {
  describe(`/metrics prints each series once: ${title}`, () => {
    let origin: TestOrigin;
    let svc: SvcUnderTest;

    before(async () => {
      origin = await startTestOrigin((request) => {
        const path = request.url ?? '';
        if (path.startsWith('/missing')) return { status: 404, headers: { 'cache-control': 'no-store' }, body: 'gone' };
        if (path.startsWith('/teapot')) return { status: 418, headers: { 'cache-control': 'no-store' }, body: 'tea' };
        return { headers: { 'cache-control': 'max-age=600' }, body: 'fresh' };
      });
      svc = await startSvc([origin.url], { config: workers });
    });

    after(async () => {
      await svc?.stop();
      await origin?.close();
    });

    test('no two samples share a name and a label set, in either format', async () => {
      // Three statuses on one route, method, cache result and source (BYPASS from the origin), then a
      // MISS and HITs, and HEADs: series that differ in each label.
      for (const path of ['/missing', '/teapot', '/missing', '/ok', '/ok', '/ok']) {
        for (const method of ['GET', 'HEAD']) await fetchRaw(`${svc.dataUrl}${path}`, { method });
      }
      const text = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
      const bytes = parseExposition(text).get('svc_response_bytes_total');
      assert.ok(bytes && bytes.samples.length >= 3, 'the node counted response bytes in several series');
      assert.deepEqual(duplicateSamples(text), [], 'text format');
      const openMetrics = (await fetchRaw(`${svc.adminUrl}/metrics`, { headers: { accept: OPENMETRICS } })).body;
      assert.deepEqual(duplicateSamples(withoutExemplars(openMetrics)), [], 'OpenMetrics');
    });

    test('the merged bytes are the sum of the statuses they merge', async () => {
      const families = parseExposition((await fetchRaw(`${svc.adminUrl}/metrics`)).body);
      const requests = families.get('svc_requests_total')!.samples.filter((s) => s.labels.method === 'GET' && s.labels.cache_result === 'BYPASS');
      assert.deepEqual(requests.map((s) => s.labels.status).sort(), ['404', '418'], 'two statuses counted apart');
      const bytes = families.get('svc_response_bytes_total')!.samples.filter((s) => s.labels.method === 'GET' && s.labels.cache_result === 'BYPASS');
      assert.equal(bytes.length, 1);
      assert.equal(bytes[0]!.value, 'gone'.length * 2 + 'tea'.length);
    });
  });
}
