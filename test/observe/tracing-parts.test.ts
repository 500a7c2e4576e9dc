// The pure parts of tracing and of the metrics exposition: where spans are posted, which format a
// scraper's Accept header asks for, and how svc's sampling agrees with OpenTelemetry's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { otlpTracesUrl } from '../../src/observe/tracing/otlp-endpoint.js';
import { wantsOpenMetrics } from '../../src/observe/openmetrics-text.js';
import { pathWithoutQuery } from '../../src/observe/tracing/span-attributes.js';
import { RequestSampler } from '../../src/observe/tracing/request-sampler.js';
import { isValidTraceId, ROOT_CONTEXT, SamplingDecision } from '@opentelemetry/api';
import { TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';

test('tracing.endpoint: the scheme is stripped, plain HTTP is used, OTLP\'s trace path is appended', () => {
  assert.equal(otlpTracesUrl(''), undefined);
  assert.equal(otlpTracesUrl('collector:4318'), 'http://collector:4318/v1/traces');
  assert.equal(otlpTracesUrl('http://collector:4318'), 'http://collector:4318/v1/traces');
  assert.equal(otlpTracesUrl('https://collector:4318/'), 'http://collector:4318/v1/traces');
  assert.equal(otlpTracesUrl('HTTPS://[::1]:4318'), 'http://[::1]:4318/v1/traces');
});

test('OpenMetrics is served when the Accept header lists it with a non-zero quality', () => {
  assert.equal(wantsOpenMetrics(undefined), false);
  assert.equal(wantsOpenMetrics('text/plain;version=0.0.4'), false);
  assert.equal(wantsOpenMetrics('*/*'), false);
  assert.equal(wantsOpenMetrics('application/openmetrics-text'), true);
  assert.equal(wantsOpenMetrics('text/plain;q=0.5, Application/OpenMetrics-Text; version=1.0.0'), true);
  assert.equal(wantsOpenMetrics('application/openmetrics-text;q=0, text/plain'), false);
});

test('a span\'s path never carries the query', () => {
  assert.equal(pathWithoutQuery('/a/b?token=secret'), '/a/b');
  assert.equal(pathWithoutQuery('/a/b'), '/a/b');
});

test('a trace id svc makes is decided by OpenTelemetry\'s ratio sampler as svc decided it', () => {
  for (const rate of [0, 0.01, 0.3, 0.99, 1]) {
    const sampler = new RequestSampler(rate);
    const sdk = new TraceIdRatioBasedSampler(rate);
    for (const sampled of [true, false]) {
      if ((sampled && rate === 0) || (!sampled && rate === 1)) continue;
      for (let i = 0; i < 500; i++) {
        const traceId = sampler.newTraceId(sampled);
        assert.ok(isValidTraceId(traceId), traceId);
        const decided = sdk.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
        assert.equal(decided, sampled, `rate ${rate}: ${traceId}`);
        assert.equal(sampler.samples(traceId), sampled);
      }
    }
  }
});

test('a new trace is sampled at the rate', () => {
  const sampler = new RequestSampler(0.2);
  let sampled = 0;
  for (let i = 0; i < 10_000; i++) if (sampler.samplesNewTrace()) sampled++;
  // Binomial(10000, 0.2): 2000 ± 40 (one standard deviation); outside 1700..2300 has odds below 1e-12.
  assert.ok(sampled > 1700 && sampled < 2300, `${sampled} of 10000`);
  assert.equal(new RequestSampler(0).samplesNewTrace(), false);
  assert.equal(new RequestSampler(1).samplesNewTrace(), true);
});
