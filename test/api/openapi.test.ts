// Issue 4 item 7: docs/openapi.yaml is true. (a) Every route the node mounts is documented; (b) live
// answers of every documented operation, for every documented status, errors included, have the
// documented status, media type, headers and body schema.
import { test, describe, before, after } from 'node:test';
import { readFile, writeFile } from 'node:fs/promises';
import assert from 'node:assert/strict';
import type { SvcNode } from '../../src/node/svc-node.js';
import { PURGE_BATCH_MAX_URLS } from '../../src/api/limits.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { header } from '../support/http.js';
import { adminCall, type JsonAnswer } from './support/admin-fetch.js';
import { startFakeCdn, cloudflareError, type FakeCdn } from '../cdn/support/fake-cdn.js';
import { loadOpenApi, OpenApiValidator, resolveResponse, type OpenApiDocument } from './support/openapi-validator.js';
import { logInOverHttp } from '../dashboard/support/dashboard-login.js';

const TOKEN = 'test-admin-token-0123456789';
const JSON_TYPE = { 'content-type': 'application/json' };

/** Documented operations that neither of this test's nodes mounts, and why. */
const NOT_MOUNTED_HERE: Record<string, string> = {};

interface Case {
  operation: string;
  status: number;
  path?: string;
  token?: string | undefined;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** The node that answers: the one with the CDN configured for the CDN cases. */
  adminUrl?: string;
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
  // A second node with the CDN configured in sync mode, against a CDN that refuses every purge: it
  // mounts GET /v1/cdn/status and answers the writes 502.
  let cdn: FakeCdn;
  let cdnSvc: SvcUnderTest;
  const AUTH_FAILURE_LIMIT = 200;
  const exercised = new Set<string>();

  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60', 'surrogate-key': 'k1' }, body: 'x' }));
    // Every documented 401 is exercised with a wrong token: the wrong-token limit is raised above their
    // number, and reached on purpose near the end. Two bans fit: the 200 case of POST /v1/ban and one
    // more, then 429 ban_limit_reached (below).
    svc = await startSvc([origin.url], {
      config: { admin: { listen: '127.0.0.1:0', token: TOKEN, pprof_enabled: true, auth_failure_limit: AUTH_FAILURE_LIMIT }, max_active_bans: 2 },
      reloadable: true,
    });
    cdn = await startFakeCdn(() => cloudflareError(400, 1012, 'refused'));
    cdnSvc = await startSvc([origin.url], {
      config: { admin: { listen: '127.0.0.1:0', token: TOKEN }, cdn: { zone_id: 'zone', api_base_url: cdn.url, api_token: 'cdn-token', async: false } },
    });
  });
  after(async () => {
    await svc.stop();
    await cdnSvc.stop();
    await cdn.close();
    await origin.close();
  });

  /** Sends the case and checks the answer against the documented response of its status. */
  async function check(item: Case): Promise<JsonAnswer> {
    const [method, path] = item.operation.split(' ') as [string, string];
    const answer = await adminCall(item.adminUrl ?? svc.adminUrl, method, item.path ?? path, {
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
    const undocumented = [...mountedRoutes(svc.node), ...mountedRoutes(cdnSvc.node)].filter((route) => !isDocumented(route, documented));
    assert.deepEqual(undocumented, []);
  });

  test('(b) answers of every documented operation match the document, errors included', async () => {
    const mounted = [...new Set([...mountedRoutes(svc.node), ...mountedRoutes(cdnSvc.node)])];
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
      // A web page's request does not drain (issue 29 item 6); undrain on a node that serves changes nothing.
      { operation: 'GET /drain', status: 403, token: undefined, headers: { origin: 'http://evil.example' } },
      { operation: 'POST /v1/undrain', status: 200 },
      { operation: 'POST /v1/undrain', status: 401, token: undefined },
      { operation: 'POST /v1/undrain', status: 401, token: 'wrong' },
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
    const onCdnNode = { adminUrl: cdnSvc.adminUrl };
    for (const [operation, good] of writes) cases.push({ operation, status: 502, body: good, ...onCdnNode });
    cases.push(
      { operation: 'GET /v1/cdn/status', status: 200, ...onCdnNode },
      { operation: 'GET /v1/cdn/status', status: 401, token: undefined, ...onCdnNode },
      { operation: 'GET /v1/cdn/status', status: 401, token: 'wrong', ...onCdnNode },
    );
    if (mounted.includes('GET /v1/cluster/peers')) cases.push({ operation: 'GET /v1/cluster/peers', status: 200, token: undefined });
    // The dashboard (issue 20) and GET /v1/bans, with a session where the case needs one; logout last.
    const login = await logInOverHttp(svc.adminUrl, TOKEN);
    const cookie = { cookie: login.cookie };
    const session = login.apiHeaders(svc.adminUrl);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const anonymous = { token: undefined };
    cases.push(
      { operation: 'GET /v1/bans', status: 200 },
      { operation: 'GET /v1/bans', status: 401, ...anonymous },
      { operation: 'GET /v1/bans', status: 403, ...anonymous, headers: cookie },
      { operation: 'POST /v1/undrain', status: 403, ...anonymous, headers: cookie },
      { operation: 'GET /dashboard', status: 308, ...anonymous },
      { operation: 'GET /dashboard/', status: 200, ...anonymous, headers: cookie },
      { operation: 'GET /dashboard/', status: 303, ...anonymous },
      { operation: 'GET /dashboard/login', status: 200, ...anonymous },
      { operation: 'GET /dashboard/login', status: 303, ...anonymous, headers: cookie },
      { operation: 'POST /dashboard/login', status: 303, ...anonymous, rawBody: `token=${TOKEN}`, headers: form },
      { operation: 'POST /dashboard/login', status: 401, ...anonymous, rawBody: 'token=wrong', headers: form },
      { operation: 'POST /dashboard/login', status: 403, ...anonymous, rawBody: `token=${TOKEN}`, headers: { ...form, origin: 'http://evil.example' } },
      { operation: 'POST /dashboard/login', status: 415, ...anonymous, body: { token: TOKEN } },
      { operation: 'GET /dashboard/api/summary', status: 200, ...anonymous, headers: session },
      { operation: 'GET /dashboard/api/summary', status: 401, ...anonymous },
      { operation: 'GET /dashboard/api/summary', status: 403, ...anonymous, headers: cookie },
      { operation: 'GET /dashboard/api/cluster', status: 200, ...anonymous, headers: session },
      { operation: 'GET /dashboard/api/cluster', status: 401, ...anonymous },
      { operation: 'GET /dashboard/api/cluster', status: 403, ...anonymous, headers: cookie },
      { operation: 'POST /dashboard/api/validate', status: 200, ...anonymous, body: { operation: 'ban', path_regex: '(' }, headers: session },
      { operation: 'POST /dashboard/api/validate', status: 400, body: { operation: 'nope' } },
      { operation: 'POST /dashboard/api/validate', status: 401, ...anonymous, body: { operation: 'ban' } },
      { operation: 'POST /dashboard/api/validate', status: 403, ...anonymous, body: { operation: 'ban' }, headers: cookie },
      { operation: 'GET /dashboard/{view}', status: 200, ...anonymous, path: '/dashboard/invalidation', headers: cookie },
      { operation: 'GET /dashboard/{view}', status: 303, ...anonymous, path: '/dashboard/bans' },
      // A session cookie without its CSRF token authorizes none of the /v1/ API.
      ...writes.map(([operation, good]): Case => ({ operation, status: 403, ...anonymous, body: good, headers: cookie })),
      ...['GET /v1/auth/check', 'GET /v1/stats', 'GET /v1/config', 'GET /v1/invalidations/recent'].map(
        (operation): Case => ({ operation, status: 403, ...anonymous, headers: cookie }),
      ),
      { operation: 'GET /v1/debug/cachecheck', status: 403, ...anonymous, path: `/v1/debug/cachecheck?url=${encodeURIComponent(url)}`, headers: cookie },
      { operation: 'POST /dashboard/logout', status: 403, ...anonymous, rawBody: 'csrf=forged', headers: { ...form, ...cookie } },
      { operation: 'POST /dashboard/logout', status: 303, ...anonymous, rawBody: `csrf=${login.csrf}`, headers: { ...form, ...cookie } },
    );
    for (const item of cases) await check(item);
    const asset = await check({ operation: 'GET /dashboard/assets/{asset}', status: 200, ...anonymous, path: '/dashboard/assets/dashboard.js' });
    await check({
      operation: 'GET /dashboard/assets/{asset}',
      status: 304,
      ...anonymous,
      path: '/dashboard/assets/dashboard.js',
      headers: { 'if-none-match': header(asset, 'etag') ?? '' },
    });
    const cdnLogin = await logInOverHttp(cdnSvc.adminUrl, TOKEN);
    await check({ operation: 'GET /v1/cdn/status', status: 403, ...anonymous, ...onCdnNode, headers: { cookie: cdnLogin.cookie } });

    // Reload: unchanged, a reloadable change, a change that needs a restart, an invalid file.
    const file = svc.configFile!;
    const original = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await check({ operation: 'POST /v1/reload', status: 200 });
    await check({ operation: 'POST /v1/reload', status: 401, token: undefined });
    await writeFile(file, JSON.stringify({ ...original, hot_max_bytes: 1_000_000 }));
    await check({ operation: 'POST /v1/reload', status: 200 });
    await writeFile(file, JSON.stringify({ ...original, hot_max_bytes: 1_000_000, listen: '127.0.0.1:1' }));
    await check({ operation: 'POST /v1/reload', status: 409 });
    await writeFile(file, JSON.stringify({ ...original, routes: [] }));
    await check({ operation: 'POST /v1/reload', status: 422 });

    // One profile at a time: while one runs, both profiling endpoints answer 409.
    const running = check({ operation: 'GET /debug/pprof/profile', status: 200, path: '/debug/pprof/profile?seconds=1' });
    // Kept as a sleep: only the busy answer itself shows that the profile has begun, and asking
    // before it had (a heap snapshot taken) would take the profiler and refuse the profile instead.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await check({ operation: 'GET /debug/pprof/heap', status: 409 });
    await check({ operation: 'GET /debug/pprof/profile', status: 409, path: '/debug/pprof/profile?seconds=1' });
    await running;

    // Past admin.auth_failure_limit wrong tokens from this address, every token-protected operation
    // answers 429, whatever it is asked (the token is checked first).
    // The CDN node keeps the default limit (10).
    for (let i = 0; i < AUTH_FAILURE_LIMIT; i++) await adminCall(svc.adminUrl, 'GET', '/v1/auth/check', { token: 'wrong' });
    for (let i = 0; i < 10; i++) await adminCall(cdnSvc.adminUrl, 'GET', '/v1/auth/check', { token: 'wrong' });
    const mountedOnSvc = mountedRoutes(svc.node);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (operation.responses['429'] === undefined || !mounted.includes(name)) continue;
        // The login form is read before its token is checked: it is sent whole, with the right token.
        const login = name === 'POST /dashboard/login' ? { rawBody: `token=${TOKEN}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {};
        await check({ operation: name, status: 429, ...login, ...(mountedOnSvc.includes(name) ? {} : onCdnNode) });
      }
    }

    // Last, since it takes the node out of service: drain, then readiness is 503.
    await check({ operation: 'GET /drain', status: 200 });
    await check({ operation: 'GET /readyz', status: 503 });

    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        const underPrefix = mounted.some((route) => route.endsWith('*') && name.startsWith(route.slice(0, -1)));
        if (!mounted.includes(name) && !underPrefix) {
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
