// The traffic metrics count each request in its own label set's series, whatever order label sets
// arrive in: consecutive requests with the same labels take a shortcut, and one that differs in any
// label must not be counted in the previous request's series.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { TrafficMetrics, type RequestObservation } from '../../src/observe/traffic-metrics.js';

const hit: RequestObservation = { method: 'GET', status: 200, cacheResult: 'HIT', source: 'hot', route: 'a', durationSeconds: 0.0002, bytesOut: 10, traceId: undefined };

/** One request of `hit` changed in each label in turn, so every label must tell series apart. */
const others: RequestObservation[] = [
  { ...hit, method: 'HEAD' },
  { ...hit, status: 304 },
  { ...hit, cacheResult: 'STALE' },
  { ...hit, source: 'warm' },
  { ...hit, route: 'b' },
];

function sample(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('each request is counted in its own label set, in any order', async () => {
  const metrics = new TrafficMetrics();
  const registry = new Registry();
  metrics.register(registry);
  // hit, other, hit, hit, other…: every change of label set between consecutive requests.
  for (const other of others) {
    metrics.observe(hit);
    metrics.observe(other);
    metrics.observe(hit);
  }
  const text = await registry.metrics();
  const labelsOf = (o: RequestObservation): string =>
    `method="${o.method}",status="${o.status}",cache_result="${o.cacheResult}",source="${o.source}",route="${o.route}"`;
  assert.equal(sample(text, 'svc_requests_total', labelsOf(hit)), 2 * others.length);
  for (const other of others) assert.equal(sample(text, 'svc_requests_total', labelsOf(other)), 1, labelsOf(other));
  assert.equal(sample(text, 'svc_request_duration_seconds_count', labelsOf(hit)), 2 * others.length);
  // The 304 differs from `hit` only in its status, which this metric does not print: one sample for both.
  assert.equal(
    sample(text, 'svc_response_bytes_total', `method="GET",cache_result="HIT",source="hot",route="a"`),
    10 * (2 * others.length + 1),
  );
});
