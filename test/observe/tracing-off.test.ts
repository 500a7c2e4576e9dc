// Spec §6.4: an empty `tracing.endpoint` is tracing off, at no cost to a request. This file runs in a
// process of its own (node --test), so what it finds loaded is what a node without tracing loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startTestOrigin } from '../support/test-origin.js';
import { startSvc } from '../support/svc-harness.js';
import { fetchRaw, header } from '../support/http.js';

test('without an endpoint no OpenTelemetry SDK is loaded, no trace context is made, and no exemplar is shown', async () => {
  const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'untraced' }));
  const svc = await startSvc([origin.url], { config: { tracing: { endpoint: '', sampling_rate: 1 } } });
  try {
    assert.equal(header(await fetchRaw(`${svc.dataUrl}/untraced`), 'x-cache'), 'MISS');
    assert.equal(header(await fetchRaw(`${svc.dataUrl}/untraced`), 'x-cache'), 'HIT');
    const clientContext = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await fetchRaw(`${svc.dataUrl}/client-traced`, { headers: { traceparent: clientContext } });

    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) =>
      /@opentelemetry[\\/](sdk-trace|otlp-transformer|resources|core)[\\/]/.test(path),
    );
    assert.deepEqual(loaded, []);
    assert.equal(origin.requests[0]!.headers.traceparent, undefined, 'svc adds no trace context of its own');
    assert.equal(origin.requests[1]!.headers.traceparent, clientContext, "a client's context passes through untouched");

    const metrics = await fetchRaw(`${svc.adminUrl}/metrics`, { headers: { accept: 'application/openmetrics-text' } });
    assert.match(metrics.body, /^svc_request_duration_seconds_bucket\{le="\+Inf",method="GET",status="200",cache_result="HIT"/m);
    assert.ok(!metrics.body.includes('trace_id'));
    assert.ok(!metrics.body.includes('svc_tracing_spans_dropped'), 'the drop counter exists only with tracing on');
  } finally {
    await svc.stop();
    await origin.close();
  }
});
