// Issue 4 item 7: docs/openapi.yaml is true. (a) Every route the node mounts is documented; (b) live
// answers of every documented operation, for every documented status, errors included, have the
// documented status, media type, headers and body schema.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { SvcNode } from '../../src/node/svc-node.js';
import { PURGE_BATCH_MAX_URLS } from '../../src/api/limits.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { header } from '../support/http.js';
import { adminCall, type JsonAnswer } from './support/admin-fetch.js';
import { loadOpenApi, OpenApiValidator, resolveResponse, type OpenApiDocument } from './support/openapi-validator.js';

const TOKEN = 'test-admin-token-0123456789';
const JSON_TYPE = { 'content-type': 'application/json' };

/** Documented operations that this test's node does not mount, and why. */
const NOT_MOUNTED_HERE: Record<string, string> = {
  'GET /v1/cdn/status': 'mounted only when the CDN integration is configured',
};

interface Case {
  operation: string;
  status: number;
  path?: string;
  token?: string | undefined;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

function mountedRoutes(node: SvcNode): string[] {
  const withRoutes = node as SvcNode & { adminRoutes?: () => string[] };
  assert.ok(withRoutes.adminRoutes, 'SvcNode.adminRoutes() lists the mounted admin routes');
  return withRoutes.adminRoutes();
}

function documentedOperations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
}

function isDocumented(route: string, documented: readonly string[]): boolean {
  if (!route.endsWith('*')) return documented.includes(route);
  // A prefix route (`/dashboard/*`) is documented when an operation of that method lies under it.
  return documented.some((operation) => operation.startsWith(route.slice(0, -1)));
}

describe('docs/openapi.yaml', () => {
  const document = loadOpenApi();
  const validator = new OpenApiValidator(document);
  const documented = documentedOperations(document);
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  const exercised = new Set<string>();

  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60', 'surrogate-key': 'k1' }, body: 'x' }));
    svc = await startSvc([origin.url], {
      // Two bans fit: the 200 case of POST /v1/ban and one more, then 429 (below).
      config: { admin: { listen: '127.0.0.1:0', token: TOKEN, pprof_enabled: true }, max_active_bans: 2 },
    });
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  /** Sends the case and checks the answer against the documented response of its status. */
  async function check(item: Case): Promise<JsonAnswer> {
    const [method, path] = item.operation.split(' ') as [string, string];
    const answer = await adminCall(svc.adminUrl, method, item.path ?? path, {
      token: 'token' in item ? item.token : TOKEN,
      ...(item.body === undefined ? {} : { body: item.body }),
      ...(item.rawBody === undefined ? {} : { rawBody: item.rawBody }),
      ...(item.headers === undefined ? {} : { headers: item.headers }),
    });
    const label = `${item.operation} → ${item.status}`;
    assert.equal(answer.status, item.status, `${label}: got ${answer.status} ${answer.body.slice(0, 200)}`);
    const operation = document.paths[path]?.[method.toLowerCase()];
    assert.ok(operation, `${item.operation} is documented`);
    const documentedResponse = operation.responses[String(item.status)];
    assert.ok(documentedResponse, `${label} is documented`);
    const response = resolveResponse(document, documentedResponse);
    for (const name of Object.keys(response.headers ?? {})) assert.ok(header(answer, name.toLowerCase()), `${label}: header ${name}`);
    if (response.content) {
      const mediaType = header(answer, 'content-type')?.split(';')[0]?.trim() ?? '';
      const content = response.content[mediaType];
      assert.ok(content, `${label}: media type ${mediaType} is not documented`);
      if (mediaType === 'application/json' && content.schema) {
        assert.deepEqual(validator.errors(content.schema, answer.json), [], `${label}: ${answer.body.slice(0, 300)}`);
      }
    }
    exercised.add(`${item.operation} ${item.status}`);
    return answer;
  }

  test('(a) every mounted admin route is documented', () => {
    const undocumented = mountedRoutes(svc.node).filter((route) => !isDocumented(route, documented));
    assert.deepEqual(undocumented, []);
  });

  test('(b) answers of every documented operation match the document, errors included', async () => {
    const mounted = mountedRoutes(svc.node);
    const url = `${svc.dataUrl}/doc`;
    await adminCall(svc.dataUrl, 'GET', '/doc');
    const tooBig = { rawBody: `{"url":"${'x'.repeat(1024 * 1024)}"}`, headers: JSON_TYPE };
    const writes: [string, unknown, unknown][] = [
      ['POST /v1/purge', { url }, { url: 'relative' }],
      ['POST /v1/purge/batch', { urls: [url, 'bad'] }, { urls: 'no' }],
      ['POST /v1/ban', { surrogate_key: 'k1' }, {}],
      ['POST /v1/refresh', { url }, { url: 7 }],
    ];
    const cases: Case[] = [
      { operation: 'GET /healthz', status: 200 },
      { operation: 'GET /readyz', status: 200, path: '/readyz?detail=1' },
      { operation: 'GET /version', status: 200 },
      { operation: 'GET /metrics', status: 200 },
      ...writes.flatMap(([operation, good, bad]): Case[] => [
        { operation, status: 200, body: good },
        { operation, status: 400, body: bad },
        { operation, status: 400, rawBody: '{', headers: JSON_TYPE },
        { operation, status: 401, token: undefined, body: good },
        { operation, status: 401, token: 'wrong', body: good },
        { operation, status: 413, ...tooBig },
        { operation, status: 415, rawBody: 'url=x', headers: { 'content-type': 'text/plain' } },
      ]),
      { operation: 'POST /v1/purge/batch', status: 413, body: { urls: Array.from({ length: PURGE_BATCH_MAX_URLS + 1 }, () => url) } },
      { operation: 'POST /v1/ban', status: 400, body: { path_regex: '[' } },
      { operation: 'POST /v1/ban', status: 200, body: { surrogate_key: 'k2' } },
      { operation: 'POST /v1/ban', status: 429, body: { surrogate_key: 'k3' } },
      { operation: 'GET /v1/auth/check', status: 200 },
      { operation: 'GET /v1/stats', status: 200 },
      { operation: 'GET /v1/stats', status: 200, path: `/v1/stats?url=${encodeURIComponent(url)}` },
      { operation: 'GET /v1/stats', status: 400, path: '/v1/stats?url=nope' },
      { operation: 'GET /v1/config', status: 200 },
      { operation: 'GET /v1/debug/cachecheck', status: 200, path: `/v1/debug/cachecheck?url=${encodeURIComponent(url)}` },
      { operation: 'GET /v1/debug/cachecheck', status: 200, path: `/v1/debug/cachecheck?url=${encodeURIComponent(`${url}/missing`)}` },
      { operation: 'GET /v1/debug/cachecheck', status: 400, path: '/v1/debug/cachecheck?url=nope' },
      { operation: 'GET /v1/invalidations/recent', status: 200 },
      { operation: 'GET /debug/pprof/', status: 200 },
      { operation: 'GET /debug/pprof/profile', status: 200, path: '/debug/pprof/profile?seconds=1' },
      { operation: 'GET /debug/pprof/profile', status: 400, path: '/debug/pprof/profile?seconds=61' },
      { operation: 'GET /debug/pprof/heap', status: 200 },
    ];
    for (const operation of ['GET /v1/auth/check', 'GET /v1/stats', 'GET /v1/config', 'GET /v1/debug/cachecheck', 'GET /v1/invalidations/recent']) {
      cases.push({ operation, status: 401, token: undefined }, { operation, status: 401, token: 'wrong' });
    }
    for (const operation of ['GET /debug/pprof/', 'GET /debug/pprof/heap', 'GET /debug/pprof/profile']) cases.push({ operation, status: 401, token: undefined });
    if (mounted.includes('GET /v1/cluster/peers')) cases.push({ operation: 'GET /v1/cluster/peers', status: 200, token: undefined });
    for (const item of cases) await check(item);

    // One profile at a time: while one runs, both profiling endpoints answer 409.
    const running = check({ operation: 'GET /debug/pprof/profile', status: 200, path: '/debug/pprof/profile?seconds=1' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await check({ operation: 'GET /debug/pprof/heap', status: 409 });
    await check({ operation: 'GET /debug/pprof/profile', status: 409, path: '/debug/pprof/profile?seconds=1' });
    await running;

    // Last, since it takes the node out of service: drain, then readiness is 503.
    await check({ operation: 'GET /drain', status: 200 });
    await check({ operation: 'GET /readyz', status: 503 });

    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (!mounted.includes(name)) {
          assert.ok(name in NOT_MOUNTED_HERE || name === 'GET /v1/cluster/peers', `${name} is documented but not mounted`);
          continue;
        }
        for (const status of Object.keys(operation.responses)) if (!exercised.has(`${name} ${status}`)) missing.push(`${name} ${status}`);
      }
    }
    assert.deepEqual(missing, [], 'documented responses no case exercised');
  });

  test('404 and 405 answers have the documented error shape', async () => {
    const errorSchema = document.components.schemas.Error;
    const notFound = await adminCall(svc.adminUrl, 'GET', '/v1/not-here');
    assert.equal(notFound.status, 404);
    assert.deepEqual(validator.errors(errorSchema, notFound.json), []);
    const wrongMethod = await adminCall(svc.adminUrl, 'DELETE', '/v1/stats');
    assert.equal(wrongMethod.status, 405);
    assert.equal(header(wrongMethod, 'allow'), 'GET');
    assert.deepEqual(validator.errors(errorSchema, wrongMethod.json), []);
  });

  test('the validator rejects what the document forbids', () => {
    const schema = document.components.schemas.StatsResponse;
    assert.notDeepEqual(validator.errors(schema, { tiers: { hot: { entries: -1 } } }), []);
    const peer = document.components.schemas.Peer;
    const good = { name: 'a', cluster_address: 'h:1', admin_address: 'h:2', state: 'alive', incarnation: 0, mode: 'eventual', version: '0.4.0', ring_share: null, mode_drift: false };
    assert.deepEqual(validator.errors(peer, good), []);
    assert.notDeepEqual(validator.errors(peer, { ...good, ring_share: 'x' }), []);
    assert.notDeepEqual(validator.errors(peer, { ...good, state: 'gone' }), []);
  });
});
