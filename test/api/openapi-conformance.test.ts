// Issue 21 item 2: the check every admin answer in the test suite passes through (test/support/
// openapi-conformance.ts) refuses answers that differ from docs/openapi.yaml.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkAdminAnswers, conformanceProblem, stopCheckingAdminAnswers } from '../support/openapi-conformance.js';
import { fetchRaw } from '../support/http.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

test('an answer that differs from the document is named; one that conforms passes', () => {
  assert.equal(conformanceProblem('GET', '/healthz', 200, JSON_TYPE, Buffer.from('{"status":"ok"}')), undefined);
  assert.match(conformanceProblem('GET', '/healthz', 200, JSON_TYPE, Buffer.from('{"status":7}'))!, /^GET \/healthz → 200: \/status must be string/);
  assert.match(conformanceProblem('GET', '/healthz', 418, JSON_TYPE, Buffer.from('{}'))!, /status 418 is not documented/);
  assert.match(conformanceProblem('GET', '/v1/stats?url=x', 200, { 'content-type': 'text/plain' }, Buffer.from('x'))!, /media type "text\/plain" is not documented/);
  assert.match(conformanceProblem('GET', '/v1/undocumented', 200, JSON_TYPE, Buffer.from('{}'))!, /no such operation/);
  assert.equal(conformanceProblem('GET', '/v1/auth/check', 404, JSON_TYPE, Buffer.from('{"error":{"code":"not_found","message":"m"}}')), undefined);
  assert.match(conformanceProblem('DELETE', '/v1/stats', 405, JSON_TYPE, Buffer.from('{}'))!, /not the documented error body/);
});

test('a registered admin address that answers off the document fails the call that got the answer', async () => {
  const server = createServer((_request, response) => {
    response.writeHead(200, JSON_TYPE);
    response.end('{"status":"purged","extra_but_allowed":1,"count":"three"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    checkAdminAnswers(url);
    await assert.rejects(fetchRaw(`${url}/v1/purge/batch`, { method: 'POST' }), /the admin answer differs from docs\/openapi\.yaml: POST \/v1\/purge\/batch → 200: .*count must be integer/);
  } finally {
    stopCheckingAdminAnswers(url);
    server.close();
  }
});
