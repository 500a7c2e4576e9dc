// The pure parts of tracing and of the metrics exposition: where spans are posted, and which format
// a scraper's Accept header asks for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { otlpTracesUrl } from '../../src/observe/tracing/otlp-endpoint.js';
import { wantsOpenMetrics } from '../../src/observe/openmetrics-text.js';
import { pathWithoutQuery } from '../../src/observe/tracing/span-attributes.js';

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
