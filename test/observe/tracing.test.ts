// Spec §6.4 end to end: a real svc node exports its spans over OTLP/HTTP to a receiver written for the
// test, and a real origin sees the trace context svc sends it. Each test reads back what the exporter
// posted: the span tree, names, parentage and attributes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

function tracingConfig(endpoint: string, samplingRate = 1): Record<string, unknown> {
  return { tracing: { endpoint, service_name: 'edge-test', sampling_rate: samplingRate } };
}

/** The spans of one trace, by name; each name must occur once. */
function treeOf(spans: ReceivedSpan[], traceId: string): Map<string, ReceivedSpan> {
  const tree = new Map<string, ReceivedSpan>();
  for (const span of spans.filter((s) => s.traceId === traceId)) {
    assert.ok(!tree.has(span.name), `${span.name} appears twice in trace ${traceId}`);
    tree.set(span.name, span);
  }
  return tree;
}

function span(tree: Map<string, ReceivedSpan>, name: string): ReceivedSpan {
  const found = tree.get(name);
  assert.ok(found, `no ${name} span; the trace has ${[...tree.keys()].join(', ')}`);
  return found;
}

/** The trace whose listener span served `path` (url.path attribute). */
async function traceOf(receiver: OtlpReceiver, path: string, names: string[]): Promise<Map<string, ReceivedSpan>> {
  let found: Map<string, ReceivedSpan> | undefined;
  await receiver.waitFor((spans) => {
    const listener = spans.find((s) => s.name === 'svc.listener.http' && s.attributes['url.path'] === path);
    if (!listener) return false;
    const tree = new Map(spans.filter((s) => s.traceId === listener.traceId).map((s) => [s.name, s]));
    if (!names.every((name) => tree.has(name))) return false;
    found = treeOf(spans, listener.traceId);
    return true;
  });
  return found!;
}

function parseTraceparent(value: string | string[] | undefined): { traceId: string; parentId: string; flags: string } {
  assert.equal(typeof value, 'string', 'one traceparent field');
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value as string);
  assert.ok(match, `a W3C traceparent: ${String(value)}`);
  return { traceId: match[1]!, parentId: match[2]!, flags: match[3]! };
}

function metricValue(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

/** Waits until spans are counted dropped because their export failed. */
async function untilExportFailedCounted(svc: SvcUnderTest, what: string): Promise<void> {
  await eventually(
    what,
    async () => metricValue((await fetchRaw(`${svc.adminUrl}/metrics`)).body, 'svc_tracing_spans_dropped_total', 'reason="export_failed"'),
    (dropped) => dropped >= 1,
    { everyMs: 50 },
  );
}

describe('tracing to an OTLP/HTTP collector', () => {
  let origin: TestOrigin;
  let receiver: OtlpReceiver;
  let svc: SvcUnderTest;

  before(async () => {
    origin = await startTestOrigin();
    receiver = await startOtlpReceiver();
    svc = await startSvc([origin.url], { config: tracingConfig(`http://${receiver.endpoint}`) });
  });
  after(async () => {
    await svc.stop();
    await receiver.close();
    await origin.close();
  });

  test('a miss is listener > pipeline > cache > origin, and the origin sees the origin span as parent', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'public, max-age=60' }, body: 'traced' }));
    const answer = await fetchRaw(`${svc.dataUrl}/traced-miss?token=s3cret-query`, { headers: { authorization: 'Bearer s3cret-header' } });
    assert.equal(header(answer, 'x-cache'), 'MISS');
    const tree = await traceOf(receiver, '/traced-miss', ['svc.listener.http', 'svc.pipeline', 'svc.cache', 'svc.origin']);
    const listener = span(tree, 'svc.listener.http');
    const pipeline = span(tree, 'svc.pipeline');
    const cache = span(tree, 'svc.cache');
    const originSpan = span(tree, 'svc.origin');
    assert.equal(tree.size, 4);
    assert.equal(listener.parentSpanId, '', 'no incoming traceparent: the listener span is the root');
    assert.equal(pipeline.parentSpanId, listener.spanId);
    assert.equal(cache.parentSpanId, pipeline.spanId);
    assert.equal(originSpan.parentSpanId, cache.spanId);
    assert.equal(listener.kind, SERVER);
    assert.equal(originSpan.kind, CLIENT);

    assert.equal(listener.resource['service.name'], 'edge-test');
    assert.deepEqual(
      { method: listener.attributes['http.request.method'], status: listener.attributes['http.response.status_code'], route: listener.attributes['svc.route'] },
      { method: 'GET', status: 200, route: 'main' },
    );
    const key = `http://${new URL(svc.dataUrl).host}/traced-miss?token=s3cret-query`;
    assert.deepEqual(
      {
        result: cache.attributes['svc.cache.result'],
        source: cache.attributes['svc.cache.source'],
        status: cache.attributes['http.response.status_code'],
        route: cache.attributes['svc.route'],
        keyHash: cache.attributes['svc.cache.key_hash'],
      },
      { result: 'MISS', source: 'origin', status: 200, route: 'main', keyHash: createHash('sha256').update(key).digest('hex').slice(0, 16) },
    );
    assert.deepEqual(
      {
        method: originSpan.attributes['http.request.method'],
        path: originSpan.attributes['url.path'],
        status: originSpan.attributes['http.response.status_code'],
        address: originSpan.attributes['server.address'],
        port: originSpan.attributes['server.port'],
        pool: originSpan.attributes['svc.upstream.pool'],
      },
      { method: 'GET', path: '/traced-miss', status: 200, address: '127.0.0.1', port: origin.port, pool: 'origin' },
    );

    const seen = origin.requests.find((r) => r.url.startsWith('/traced-miss'))!;
    const traceparent = parseTraceparent(seen.headers.traceparent);
    assert.equal(traceparent.traceId, listener.traceId);
    assert.equal(traceparent.parentId, originSpan.spanId);
    assert.equal(traceparent.flags, '01');

    // Nothing a client could hide a secret in reaches a span: neither the query nor a header.
    const everything = JSON.stringify([...tree.values()].map((s) => s.attributes));
    assert.ok(!everything.includes('s3cret'), everything);
  });

  test('a hit is listener > pipeline > cache, with no origin span', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'hit me' }));
    await fetchRaw(`${svc.dataUrl}/traced-hit`);
    const before = receiver.spans.length;
    const answer = await fetchRaw(`${svc.dataUrl}/traced-hit`);
    assert.equal(header(answer, 'x-cache'), 'HIT');
    let hitTrace: Map<string, ReceivedSpan> | undefined;
    await receiver.waitFor((spans) => {
      const cache = spans.slice(before).find((s) => s.name === 'svc.cache' && s.attributes['svc.cache.result'] === 'HIT');
      if (cache) hitTrace = treeOf(spans, cache.traceId);
      return hitTrace !== undefined && hitTrace.has('svc.listener.http') && hitTrace.has('svc.pipeline');
    });
    assert.deepEqual([...hitTrace!.keys()].sort(), ['svc.cache', 'svc.listener.http', 'svc.pipeline']);
    assert.equal(span(hitTrace!, 'svc.cache').attributes['svc.cache.source'], 'hot');
  });

  test('an incoming traceparent is continued, and its tracestate goes on to the origin', async () => {
    origin.handle(() => ({ body: 'continued' }));
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    await fetchRaw(`${svc.dataUrl}/continued`, { headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=opaque' } });
    const tree = await traceOf(receiver, '/continued', ['svc.listener.http', 'svc.origin']);
    const listener = span(tree, 'svc.listener.http');
    assert.equal(listener.traceId, traceId);
    assert.equal(listener.parentSpanId, parentId);
    const seen = origin.requests.find((r) => r.url === '/continued')!;
    const traceparent = parseTraceparent(seen.headers.traceparent);
    assert.equal(traceparent.traceId, traceId);
    assert.equal(traceparent.parentId, span(tree, 'svc.origin').spanId);
    assert.equal(seen.headers.tracestate, 'vendor=opaque');
  });

  test('a request passed through (POST) has its origin span under the cache span, BYPASS', async () => {
    origin.handle(() => ({ status: 201, body: 'made' }));
    const answer = await fetchRaw(`${svc.dataUrl}/made`, { method: 'POST', body: 'x' });
    assert.equal(answer.status, 201);
    const tree = await traceOf(receiver, '/made', ['svc.cache', 'svc.origin']);
    assert.equal(span(tree, 'svc.origin').parentSpanId, span(tree, 'svc.cache').spanId);
    assert.equal(span(tree, 'svc.origin').attributes['http.request.method'], 'POST');
    assert.equal(span(tree, 'svc.cache').attributes['svc.cache.result'], 'BYPASS');
  });

  test('an origin that fails gives an origin span with an error status and its error type', async () => {
    const refusing = await startTestOrigin();
    const port = refusing.port;
    await refusing.close();
    const alone = await startSvc([`http://127.0.0.1:${port}`], { config: tracingConfig(receiver.endpoint) });
    try {
      const answer = await fetchRaw(`${alone.dataUrl}/refused`);
      assert.equal(answer.status, 502);
      const tree = await traceOf(receiver, '/refused', ['svc.origin', 'svc.cache']);
      const originSpan = span(tree, 'svc.origin');
      assert.equal(originSpan.statusCode, ERROR);
      assert.equal(originSpan.attributes['error.type'], 'upstream_refused');
      assert.equal(span(tree, 'svc.listener.http').statusCode, ERROR);
    } finally {
      await alone.stop();
    }
  });

  test('the duration of a traced request carries its trace id as an exemplar, in OpenMetrics only', async () => {
    origin.handle(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'exemplary' }));
    await fetchRaw(`${svc.dataUrl}/exemplar`);
    const tree = await traceOf(receiver, '/exemplar', ['svc.listener.http']);
    const traceId = span(tree, 'svc.listener.http').traceId;

    const openMetrics = await fetchRaw(`${svc.adminUrl}/metrics`, {
      headers: { accept: 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' },
    });
    assert.match(header(openMetrics, 'content-type') ?? '', /^application\/openmetrics-text; version=1\.0\.0/);
    assert.ok(openMetrics.body.endsWith('# EOF\n'));
    const withExemplar = openMetrics.body
      .split('\n')
      .filter((line) => line.startsWith('svc_request_duration_seconds_bucket{') && line.includes(`# {trace_id="${traceId}"}`));
    assert.equal(withExemplar.length >= 1, true, `an exemplar with trace ${traceId}`);
    assert.match(withExemplar[0]!, /route="main"/);
    assert.match(withExemplar[0]!, / # \{trace_id="[0-9a-f]{32}"\} [0-9.e-]+ \d+(\.\d+)?$/);
    // OpenMetrics names a counter's family without _total and keeps _total on its samples.
    assert.match(openMetrics.body, /^# TYPE svc_requests counter$/m);
    assert.match(openMetrics.body, /^svc_requests_total\{method="GET",status="200",cache_result="MISS",source="origin",route="main"\} \d+$/m);

    const prometheus = await fetchRaw(`${svc.adminUrl}/metrics`);
    assert.match(header(prometheus, 'content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.ok(!prometheus.body.includes('trace_id'), 'the Prometheus text format carries no exemplar');
    assert.match(prometheus.body, /^# TYPE svc_requests_total counter$/m, 'an OpenMetrics scrape leaves the counters their names');
  });
});

describe('sampling', () => {
  test('at rate 0 nothing is exported, a client\'s sampled flag included, and the origin still gets the trace context', async () => {
    const origin = await startTestOrigin(() => ({ body: 'unsampled' }));
    const receiver = await startOtlpReceiver();
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint, 0) });
    try {
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      await fetchRaw(`${svc.dataUrl}/unsampled`, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
      await fetchRaw(`${svc.dataUrl}/unsampled-rooted`);
      const continued = parseTraceparent(origin.requests[0]!.headers.traceparent);
      assert.equal(continued.traceId, traceId);
      assert.equal(continued.flags, '00');
      assert.notEqual(continued.parentId, 'b7ad6b7169203331', 'svc passes its own span id on');
      assert.equal(parseTraceparent(origin.requests[1]!.headers.traceparent).flags, '00');
      const metrics = await fetchRaw(`${svc.adminUrl}/metrics`, { headers: { accept: 'application/openmetrics-text' } });
      assert.ok(!metrics.body.includes('trace_id'), 'an unsampled request leaves no exemplar');
    } finally {
      await svc.stop(); // flushes the exporter: anything sampled would have arrived by now
      await receiver.close();
      await origin.close();
    }
    assert.deepEqual(receiver.spans, []);
  });
});

describe('sampling at a fraction', () => {
  test('at rate 0.5 about half the requests are traced, each wholly or not at all', async () => {
    const origin = await startTestOrigin(() => ({ body: 'half' }));
    const receiver = await startOtlpReceiver();
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint, 0.5) });
    const requests = 40;
    try {
      for (let i = 0; i < requests; i++) await fetchRaw(`${svc.dataUrl}/half-${i}`);
    } finally {
      await svc.stop(); // flushes what was queued
      await receiver.close();
      await origin.close();
    }
    const listeners = receiver.spans.filter((s) => s.name === 'svc.listener.http');
    // Binomial(40, 0.5) falls outside 5..35 with a probability of about 1e-6.
    assert.ok(listeners.length >= 5 && listeners.length <= 35, `${listeners.length} of ${requests} traced`);
    for (const listener of listeners) assert.equal(treeOf(receiver.spans, listener.traceId).size, 4, 'a sampled request has all its spans');
    const sampledIds = new Set(listeners.map((s) => s.traceId));
    for (const request of origin.requests) {
      const context = parseTraceparent(request.headers.traceparent);
      assert.equal(context.flags === '01', sampledIds.has(context.traceId), 'the origin is told whether the trace is sampled');
    }
  });
});

describe('a response that streams', () => {
  let slowOrigin: Server;
  before(async () => {
    slowOrigin = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60' });
      response.write('first half, ');
      // The behaviour under test: a body that takes 400 ms, so that a span ended at the head shows.
      setTimeout(() => response.end('second half'), 400);
    });
    await new Promise<void>((resolve) => slowOrigin.listen(0, '127.0.0.1', () => resolve()));
  });
  after(() => new Promise<void>((resolve) => slowOrigin.close(() => resolve())));

  test('its spans end when its body has been sent, not when its head was', async () => {
    const receiver = await startOtlpReceiver();
    const svc = await startSvc([`http://127.0.0.1:${(slowOrigin.address() as AddressInfo).port}`], { config: tracingConfig(receiver.endpoint) });
    try {
      const answer = await fetchRaw(`${svc.dataUrl}/streamed`);
      assert.equal(answer.body, 'first half, second half');
      const tree = await traceOf(receiver, '/streamed', ['svc.listener.http', 'svc.cache', 'svc.origin']);
      const atLeastMs = (s: ReceivedSpan): boolean => s.endNs - s.startNs >= 350_000_000n;
      for (const name of ['svc.listener.http', 'svc.pipeline', 'svc.cache', 'svc.origin']) assert.ok(atLeastMs(span(tree, name)), `${name} lasts the whole body`);
      assert.ok(span(tree, 'svc.listener.http').endNs >= span(tree, 'svc.origin').endNs);
    } finally {
      await svc.stop();
      await receiver.close();
    }
  });
});

describe('a collector that is down or slow', () => {
  const batch = { maxQueueSize: 4, maxExportBatchSize: 2, scheduledDelayMs: 20, exportTimeoutMs: 300 };

  test('a collector that hangs costs spans (counted queue_full), never a request', async () => {
    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'still served' }));
    const receiver = await startOtlpReceiver();
    receiver.answer('hang');
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint), tracingBatch: batch });
    try {
      for (let i = 0; i < 10; i++) {
        const answer = await fetchRaw(`${svc.dataUrl}/hanging-collector`);
        assert.equal(answer.status, 200);
        assert.equal(answer.body, 'still served');
      }
      const metrics = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
      assert.ok(metricValue(metrics, 'svc_tracing_spans_dropped_total', 'reason="queue_full"') > 0, 'drops counted');
      assert.ok(receiver.exports.length >= 1, 'svc did try to export');
    } finally {
      await svc.stop();
      await receiver.close();
      await origin.close();
    }
  });

  test('a collector that refuses the export: the spans are counted export_failed', async () => {
    const origin = await startTestOrigin(() => ({ body: 'served' }));
    const receiver = await startOtlpReceiver();
    receiver.answer({ status: 400 });
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint), tracingBatch: batch });
    try {
      assert.equal((await fetchRaw(`${svc.dataUrl}/refused-export`)).status, 200);
      await untilExportFailedCounted(svc, 'the failed batch is counted');
      assert.equal(receiver.exports[0]?.path, '/v1/traces');
    } finally {
      await svc.stop();
      await receiver.close();
      await origin.close();
    }
  });

  /** Three requests, all served whatever the collector does; the spans of the first are exported. */
  async function serveThrough(svc: SvcUnderTest, path: string): Promise<void> {
    for (let i = 0; i < 3; i++) {
      const answer = await fetchRaw(`${svc.dataUrl}${path}`);
      assert.equal(answer.status, 200);
      assert.equal(answer.body, 'served');
    }
  }

  test('a collector that answers 500: the batch is counted export_failed, requests are served', async () => {
    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'served' }));
    const receiver = await startOtlpReceiver();
    receiver.answer({ status: 500 });
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint), tracingBatch: batch });
    try {
      await serveThrough(svc, '/collector-500');
      await untilExportFailedCounted(svc, 'the failed batch is counted');
      assert.ok(receiver.exports.length >= 1, 'svc did try to export');
      assert.equal(receiver.spans.length, 0);
    } finally {
      await svc.stop();
      await receiver.close();
      await origin.close();
    }
  });

  test('a collector that is down: the batch is counted export_failed, requests are served', async () => {
    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'served' }));
    const receiver = await startOtlpReceiver();
    await receiver.close(); // nothing listens on its port any more
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint), tracingBatch: batch });
    try {
      await serveThrough(svc, '/collector-down');
      await untilExportFailedCounted(svc, 'the failed batch is counted');
      await serveThrough(svc, '/collector-down');
    } finally {
      await svc.stop();
      await origin.close();
    }
  });

  test('a collector that is slow: the export gives up at its timeout (export_failed), requests are served meanwhile', async () => {
    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'served' }));
    const receiver = await startOtlpReceiver();
    receiver.answer('hang');
    // A queue with room for everything: what is dropped is the batch that timed out, not overflow.
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint), tracingBatch: { ...batch, maxQueueSize: 2048 } });
    try {
      await serveThrough(svc, '/slow-collector');
      await receiver.waitFor(() => receiver.exports.length >= 1); // an export is under way
      await serveThrough(svc, '/slow-collector');
      await untilExportFailedCounted(svc, 'the timed-out batch is counted');
      const metrics = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
      assert.equal(metricValue(metrics, 'svc_tracing_spans_dropped_total', 'reason="queue_full"'), 0);
    } finally {
      await svc.stop();
      await receiver.close();
      await origin.close();
    }
  });

  test('on stop, the spans still queued are exported', async () => {
    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'served' }));
    const receiver = await startOtlpReceiver();
    // No export is due before stop: only the shutdown flush can send these spans.
    const svc = await startSvc([origin.url], { config: tracingConfig(receiver.endpoint), tracingBatch: { ...batch, maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMs: 600_000 } });
    try {
      await serveThrough(svc, '/flushed-on-stop');
      assert.equal(receiver.exports.length, 0);
    } finally {
      await svc.stop();
    }
    try {
      const listeners = receiver.spans.filter((s) => s.name === 'svc.listener.http' && s.attributes['url.path'] === '/flushed-on-stop');
      assert.equal(listeners.length, 3, 'every request\'s spans reached the collector');
      assert.equal(receiver.spans.length, 3 * 3 + 1, 'three hits and one miss (with its origin span)');
    } finally {
      await receiver.close();
      await origin.close();
    }
  });
});
