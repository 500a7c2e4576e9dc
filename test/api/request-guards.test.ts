// The admin API's request guards on a real admin listener: bearer-token auth (spec §5) and JSON
// body reading (media type, size bound, syntax, schema), each failure in the JSON error shape.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as rawRequest } from 'node:http';
import { AdminRouter } from '../../src/admin/router.js';
import { createAdminServer } from '../../src/admin/admin-server.js';
import { createTokenCheck, requireToken } from '../../src/admin/auth.js';
import { AuthFailureLimiter } from '../../src/admin/auth-failures.js';
import { createRejectionLog } from '../../src/edge/rejections.js';
import { NodeMetrics } from '../../src/observe/metrics.js';
import { readJsonBody } from '../../src/admin/json-body.js';
import { sendJson } from '../../src/admin/json-response.js';
import { purgeBatchRequestSchema, banRequestSchema } from '../../src/api/requests.js';
import { ADMIN_BODY_MAX_BYTES } from '../../src/api/limits.js';
import { isAbsoluteHttpUrl } from '../../src/api/absolute-url.js';
import { createLogger } from '../../src/observe/logger.js';
import { LogCapture } from '../support/svc-harness.js';
import { fetchRaw, header } from '../support/http.js';

const TOKEN = 'guard-test-token-ABCDEFGHIJ';

function errorOf(body: string): { code: string; message: string } {
  return (JSON.parse(body) as { error: { code: string; message: string } }).error;
}

describe('admin request guards', () => {
  let server: Server;
  let base: string;
  const logs = new LogCapture();

  before(async () => {
    const router = new AdminRouter();
    const metrics = new NodeMetrics();
    const logger = createLogger({ destination: logs, level: 'trace' });
    const rejections = createRejectionLog('admin', logger, metrics.edge.rejected);
    const guard = { limiter: new AuthFailureLimiter({ limit: 100, windowMs: 60_000, now: Date.now }), counter: metrics.edge.adminAuthFailures, logger, rejections };
    const check = createTokenCheck(TOKEN, guard);
    router.on('GET', '/guarded', requireToken(check, (_request, response) => sendJson(response, 200, { status: 'ok' })));
    router.on('POST', '/batch', async (request, response) => sendJson(response, 200, await readJsonBody(request.raw, purgeBatchRequestSchema)));
    router.on('POST', '/ban', async (request, response) => sendJson(response, 200, await readJsonBody(request.raw, banRequestSchema)));
    server = createAdminServer(router, {
      logger,
      limits: { maxHeaderBytes: 16_384, maxHeaderFields: 100, headerTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 },
      bodyIdleTimeoutMs: 30_000,
      rejections,
      smugglingRejected: metrics.smugglingRejected,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('without Authorization: 401 missing_token with a Bearer challenge', async () => {
    const answer = await fetchRaw(`${base}/guarded`);
    assert.equal(answer.status, 401);
    assert.equal(header(answer, 'www-authenticate'), 'Bearer realm="svc"');
    assert.equal(errorOf(answer.body).code, 'missing_token');
  });

  test('another scheme counts as no token', async () => {
    const answer = await fetchRaw(`${base}/guarded`, { headers: { authorization: `Basic ${Buffer.from(`a:${TOKEN}`).toString('base64')}` } });
    assert.equal(answer.status, 401);
    assert.equal(errorOf(answer.body).code, 'missing_token');
  });

  test('a wrong token: 401 invalid_token, error="invalid_token" in the challenge, no token in the body', async () => {
    for (const wrong of ['nope', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      const answer = await fetchRaw(`${base}/guarded`, { headers: { authorization: `Bearer ${wrong}` } });
      assert.equal(answer.status, 401);
      assert.equal(header(answer, 'www-authenticate'), 'Bearer realm="svc", error="invalid_token"');
      assert.equal(errorOf(answer.body).code, 'invalid_token');
      assert.ok(!answer.body.includes(wrong) && !answer.body.includes(TOKEN));
    }
    assert.ok(!logs.text.some((line) => line.includes(TOKEN)));
  });

  test('the right token passes; the scheme name is case-insensitive (RFC 7235 §2.1)', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const answer = await fetchRaw(`${base}/guarded`, { headers: { authorization: `${scheme} ${TOKEN}` } });
      assert.equal(answer.status, 200);
    }
  });

  test('createTokenCheck refuses an empty admin token', () => {
    const metrics = new NodeMetrics();
    const logger = createLogger({ destination: logs });
    const guard = {
      limiter: new AuthFailureLimiter({ limit: 1, windowMs: 1, now: Date.now }),
      counter: metrics.edge.adminAuthFailures,
      logger,
      rejections: createRejectionLog('admin', logger, metrics.edge.rejected),
    };
    assert.throws(() => createTokenCheck('', guard), /must not be empty/);
  });

  const post = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetchRaw(`${base}${path}`, { method: 'POST', headers, body });

  test('a body that is not declared JSON: 415 unsupported_media_type', async () => {
    const notJson: Record<string, string>[] = [{ 'content-type': 'text/plain' }, {}, { 'content-type': 'application/jsonx' }];
    for (const headers of notJson) {
      const answer = await post('/batch', '{"urls":[]}', headers);
      assert.equal(answer.status, 415);
      assert.equal(errorOf(answer.body).code, 'unsupported_media_type');
    }
    const withCharset = await post('/batch', '{"urls":[]}', { 'content-type': 'Application/JSON; charset=utf-8' });
    assert.equal(withCharset.status, 200);
  });

  test('malformed JSON: 400 malformed_json saying where', async () => {
    const answer = await post('/batch', '{"urls": [}');
    assert.equal(answer.status, 400);
    const error = errorOf(answer.body);
    assert.equal(error.code, 'malformed_json');
    assert.match(error.message, /position|column|Unexpected/);
    const empty = await post('/batch', '');
    assert.equal(errorOf(empty.body).code, 'malformed_json');
  });

  test('schema violations: 400 invalid_request naming the field and what was expected', async () => {
    const cases: [string, RegExp][] = [
      ['{"urls":"http://a/"}', /^urls: expected an array/],
      ['{"urls":["http://a/", 3]}', /^urls\[1\]: expected a string/],
      ['{}', /required field "urls" is missing/],
      ['[]', /expected a JSON object|required field/],
      ['{"urls":[],"extra":1}', /unknown field "extra"/],
    ];
    for (const [body, message] of cases) {
      const answer = await post('/batch', body);
      assert.equal(answer.status, 400, body);
      const error = errorOf(answer.body);
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, message);
    }
    const ban = await post('/ban', '{"host_regexp":"x"}');
    assert.match(errorOf(ban.body).message, /unknown field "host_regexp"/);
  });

  test('a body above the limit: 413 payload_too_large, by Content-Length and while streaming', async () => {
    const big = `{"urls":["${'a'.repeat(ADMIN_BODY_MAX_BYTES)}"]}`;
    const declared = await post('/batch', big);
    assert.equal(declared.status, 413);
    assert.equal(errorOf(declared.body).code, 'payload_too_large');
    assert.match(errorOf(declared.body).message, new RegExp(`${ADMIN_BODY_MAX_BYTES} bytes`));

    // Chunked: no Content-Length, so the bound is enforced on the bytes as they arrive.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = rawRequest(`${base}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.write('{"urls":["');
      const piece = 'b'.repeat(64 * 1024);
      for (let sent = 0; sent <= ADMIN_BODY_MAX_BYTES; sent += piece.length) req.write(piece);
      req.end('"]}');
    });
    assert.equal(streamed.status, 413);
    assert.equal(errorOf(streamed.body).code, 'payload_too_large');
  });

  test('a body just under the limit is read whole', async () => {
    const filler = 'c'.repeat(ADMIN_BODY_MAX_BYTES - 20);
    const answer = await post('/batch', `{"urls":["${filler}"]}`);
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as { urls: string[] }).urls[0]!.length, filler.length);
  });
});

describe('absolute URL rule (spec §1, §2.1)', () => {
  test('accepts http and https URLs with a host', () => {
    for (const url of ['http://example.com/', 'https://example.com/a?b=c', 'HTTP://Example.COM', 'http://127.0.0.1:8080/x', 'http://[::1]/']) {
      assert.equal(isAbsoluteHttpUrl(url), true, url);
    }
  });
  test('refuses other schemes, relative URLs, missing hosts and junk', () => {
    for (const url of ['ftp://example.com/', '/path', 'example.com/x', 'http:example.com', 'http://', 'https:///x', 'http://exa mple.com/', '']) {
      assert.equal(isAbsoluteHttpUrl(url), false, url);
    }
  });
});
