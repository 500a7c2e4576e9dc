// svc's OTLP/HTTP span exporter against a real receiver on 127.0.0.1: what it posts, which answers
// it retries and which it gives up on, and that it always answers the batch processor within its
// deadline, collector down or hanging included. The retry policy's arithmetic is tested on its own.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { OtlpHttpSpanExporter } from '../../src/observe/tracing/otlp-http-exporter.js';
import { FIRST_BACKOFF_MS, MAX_ATTEMPTS, isRetryableNetworkError, isRetryableStatus, retryDelayMs } from '../../src/observe/tracing/otlp-retry.js';
import { eventually } from '../support/eventually.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

/** Two finished spans, parent and child, as the batch processor hands them over. */
function finishedSpans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] });
  const tracer = provider.getTracer('exporter-test');
  const parent = tracer.startSpan('parent');
  tracer.startSpan('child', { attributes: { 'svc.route': 'site' } }, trace.setSpan(ROOT_CONTEXT, parent)).end();
  parent.end();
  return memory.getFinishedSpans();
}

function exporterFor(endpoint: string, timeoutMs: number): OtlpHttpSpanExporter {
  return new OtlpHttpSpanExporter({ url: `http://${endpoint}/v1/traces`, timeoutMs, userAgent: 'svc/test' });
}

function exportOnce(exporter: OtlpHttpSpanExporter, spans = finishedSpans()): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

describe('the OTLP/HTTP span exporter', () => {
  async function withReceiver(run: (receiver: OtlpReceiver) => Promise<void>): Promise<void> {
    const receiver = await startOtlpReceiver();
    try {
      await run(receiver);
    } finally {
      await receiver.close();
    }
  }

  test('posts the batch as OTLP JSON to /v1/traces and reports success', () =>
    withReceiver(async (receiver) => {
      const exporter = exporterFor(receiver.endpoint, 5_000);
      try {
        const result = await exportOnce(exporter);
        assert.equal(result.code, ExportResultCode.SUCCESS);
        assert.deepEqual(receiver.spans.map((span) => span.name).sort(), ['child', 'parent']);
        const child = receiver.spans.find((span) => span.name === 'child')!;
        const parent = receiver.spans.find((span) => span.name === 'parent')!;
        assert.equal(child.parentSpanId, parent.spanId);
        assert.equal(child.attributes['svc.route'], 'site');
        assert.equal(receiver.exports[0]!.path, '/v1/traces');
        assert.equal(receiver.exports[0]!.headers['content-type'], 'application/json');
        assert.equal(receiver.exports[0]!.headers['user-agent'], 'svc/test');
      } finally {
        await exporter.shutdown();
      }
    }));

  test('a 500 fails the export at once: it is not retryable', () =>
    withReceiver(async (receiver) => {
      receiver.answer({ status: 500 });
      const exporter = exporterFor(receiver.endpoint, 5_000);
      try {
        const result = await exportOnce(exporter);
        assert.equal(result.code, ExportResultCode.FAILED);
        assert.match(String(result.error?.message), /500/);
        assert.equal(receiver.exports.length, 1);
      } finally {
        await exporter.shutdown();
      }
    }));

  test('a 503 is retried after a back-off, and the retry delivers', () =>
    withReceiver(async (receiver) => {
      receiver.answer({ status: 503 });
      const exporter = exporterFor(receiver.endpoint, 10_000);
      try {
        const result = exportOnce(exporter);
        await eventually('the first export at the receiver', () => receiver.exports.length, (exports) => exports === 1);
        receiver.answer('accept');
        assert.equal((await result).code, ExportResultCode.SUCCESS);
        assert.equal(receiver.exports.length, 2);
        assert.equal(receiver.spans.length, 2);
      } finally {
        await exporter.shutdown();
      }
    }));

  test('a 503 whose back-off would pass the deadline fails the export instead', () =>
    withReceiver(async (receiver) => {
      receiver.answer({ status: 503 });
      const exporter = exporterFor(receiver.endpoint, FIRST_BACKOFF_MS / 4);
      try {
        assert.equal((await exportOnce(exporter)).code, ExportResultCode.FAILED);
        assert.equal(receiver.exports.length, 1);
      } finally {
        await exporter.shutdown();
      }
    }));

  test('a collector that hangs fails the export at its deadline, and the exporter can still shut down', () =>
    withReceiver(async (receiver) => {
      receiver.answer('hang');
      const exporter = exporterFor(receiver.endpoint, 300);
      try {
        const result = await exportOnce(exporter);
        assert.equal(result.code, ExportResultCode.FAILED);
        assert.equal(receiver.exports.length, 1, 'the post reached the collector');
      } finally {
        await exporter.shutdown();
      }
    }));

  test('a collector that is down fails the export', async () => {
    const receiver = await startOtlpReceiver();
    await receiver.close(); // its port now refuses connections
    const exporter = exporterFor(receiver.endpoint, 300);
    try {
      const result = await exportOnce(exporter);
      assert.equal(result.code, ExportResultCode.FAILED);
      assert.ok(isRetryableNetworkError(result.error), `a refused connection: ${String(result.error)}`);
    } finally {
      await exporter.shutdown();
    }
  });

  test('shutdown lets an export under way end, then refuses new ones', () =>
    withReceiver(async (receiver) => {
      const exporter = exporterFor(receiver.endpoint, 5_000);
      const underWay = exportOnce(exporter);
      await exporter.shutdown();
      assert.equal(receiver.spans.length, 2, 'the export under way was delivered before shutdown resolved');
      assert.equal((await underWay).code, ExportResultCode.SUCCESS);
      assert.equal((await exportOnce(exporter)).code, ExportResultCode.FAILED);
      assert.equal(receiver.exports.length, 1);
    }));

  test('destroy abandons an export under way: it fails at once', () =>
    withReceiver(async (receiver) => {
      receiver.answer('hang');
      const exporter = exporterFor(receiver.endpoint, 60_000);
      const underWay = exportOnce(exporter);
      await eventually('the first export at the receiver', () => receiver.exports.length, (exports) => exports === 1);
      await exporter.destroy();
      assert.equal((await underWay).code, ExportResultCode.FAILED);
    }));
});

describe('the export retry policy', () => {
  test('the OTLP specification\'s retryable statuses, and no others', () => {
    assert.deepEqual([429, 502, 503, 504].map(isRetryableStatus), [true, true, true, true]);
    assert.deepEqual([400, 401, 404, 413, 500, 501].map(isRetryableStatus), [false, false, false, false, false, false]);
  });

  test('a broken or refused connection is retryable, directly or as the cause', () => {
    assert.ok(isRetryableNetworkError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })));
    assert.ok(isRetryableNetworkError(new Error('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) })));
    assert.ok(!isRetryableNetworkError(Object.assign(new Error('aborted'), { code: 'UND_ERR_ABORTED' })));
    assert.ok(!isRetryableNetworkError(null));
  });

  test('back-off grows by half each time, within ±20%, up to 5 s', () => {
    const at = (attempt: number, random: number): number | undefined => retryDelayMs(attempt, 60_000, undefined, () => random);
    assert.equal(at(1, 0.5), FIRST_BACKOFF_MS);
    assert.equal(at(2, 0.5), FIRST_BACKOFF_MS * 1.5);
    assert.equal(at(1, 0), FIRST_BACKOFF_MS * 0.8);
    assert.ok(at(1, 0.999_999)! < FIRST_BACKOFF_MS * 1.2);
    assert.equal(at(5, 0.5), 5_000);
  });

  test('a Retry-After replaces the back-off; nothing is waited for past the deadline or the last attempt', () => {
    assert.equal(retryDelayMs(1, 10_000, 0, Math.random), 0);
    assert.equal(retryDelayMs(1, 10_000, 3_000, Math.random), 3_000);
    assert.equal(retryDelayMs(1, 2_000, 3_000, Math.random), undefined);
    assert.equal(retryDelayMs(1, 500, undefined, () => 0.5), undefined);
    assert.equal(retryDelayMs(MAX_ATTEMPTS - 1, 60_000, 0, Math.random), 0);
    assert.equal(retryDelayMs(MAX_ATTEMPTS, 60_000, 0, Math.random), undefined);
  });
});
