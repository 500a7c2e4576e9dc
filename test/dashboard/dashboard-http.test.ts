// Issue 20 items 1 and 2 at the HTTP level, as any script or browser meets them on a real node: the
// login form that needs no JavaScript, the session cookie and its attributes, the session standing
// in for the bearer token on the /v1/ API only with its CSRF token and from its own origin, logout,
// expiry by the node's clock, a new admin token ending every session, the assets, the forms'
// validation endpoint and the Overview's summary.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { AdminRouter } from '../../src/admin/router.js';
import { createAdminServer } from '../../src/admin/admin-server.js';
import { AuthFailureLimiter } from '../../src/admin/auth-failures.js';
import { DashboardSessions, SESSION_LIFETIME_MS } from '../../src/admin/dashboard/dashboard-session.js';
import { mountDashboardRoutes } from '../../src/admin/dashboard/dashboard-routes.js';
import { NodeMetrics } from '../../src/observe/metrics.js';
import { createLogger } from '../../src/observe/logger.js';
import { createRejectionLog } from '../../src/edge/rejections.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { LogCapture, startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw, header, type Answer } from '../support/http.js';
import { FORM_TYPE, logInOverHttp } from './support/dashboard-login.js';

const TOKEN = 'test-admin-token-0123456789';
const TLS_DIR = fileURLToPath(new URL('../../../test/transports/fixtures/tls/', import.meta.url));

function json(answer: Answer): { error?: { code: string; message: string } } & Record<string, unknown> {
  return JSON.parse(answer.body) as { error?: { code: string; message: string } } & Record<string, unknown>;
}

describe('the dashboard over HTTP', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  const admin = (path: string, options: Parameters<typeof fetchRaw>[1] = {}) => fetchRaw(`${svc.adminUrl}${path}`, options);
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    admin(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const xCache = async (path: string) => header(await fetchRaw(`${svc.dataUrl}${path}`), 'x-cache');

  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=600' }, body: 'page' }));
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('/dashboard redirects to /dashboard/, and every view to the login page without a session', async () => {
    const bare = await admin('/dashboard');
    assert.equal(bare.status, 308);
    assert.equal(header(bare, 'location'), '/dashboard/');
    const root = await admin('/dashboard/');
    assert.equal(root.status, 303);
    assert.equal(header(root, 'location'), '/dashboard/login');
    const bans = await admin('/dashboard/bans');
    assert.equal(header(bans, 'location'), '/dashboard/login?next=%2Fdashboard%2Fbans');
    assert.equal((await admin('/dashboard/nowhere')).status, 404);
  });

  test('the login page is a plain form (no script), with a strict Content-Security-Policy', async () => {
    const page = await admin('/dashboard/login');
    assert.equal(page.status, 200);
    assert.match(header(page, 'content-type') ?? '', /^text\/html/);
    assert.doesNotMatch(page.body, /<script/);
    assert.match(page.body, /<form method="post" action="\/dashboard\/login">/);
    assert.match(page.body, /<input id="token" name="token" type="password"/);
    assert.match(header(page, 'content-security-policy') ?? '', /script-src 'self'.*frame-ancestors 'none'/);
    assert.equal(header(page, 'x-frame-options'), 'DENY');
  });

  test('a script logs in by posting the form: 303 and an HttpOnly, SameSite=Strict cookie of 8 hours', async () => {
    const answer = await admin('/dashboard/login', { method: 'POST', headers: FORM_TYPE, body: `token=${TOKEN}&next=%2Fdashboard%2Fcluster` });
    assert.equal(answer.status, 303);
    assert.equal(header(answer, 'location'), '/dashboard/cluster');
    assert.match(header(answer, 'set-cookie') ?? '', /^svc_session=\d+\.[\w-]{22}\.[\w-]{43}; Max-Age=28800; Path=\/; HttpOnly; SameSite=Strict$/);
    // A `next` outside the dashboard is ignored: the form cannot be used to redirect elsewhere.
    const away = await admin('/dashboard/login', { method: 'POST', headers: FORM_TYPE, body: `token=${TOKEN}&next=https%3A%2F%2Fevil.example%2F` });
    assert.equal(header(away, 'location'), '/dashboard/');
  });

  test('a wrong token, another origin or another body type get no cookie', async () => {
    const wrong = await admin('/dashboard/login', { method: 'POST', headers: FORM_TYPE, body: 'token=not-the-token-at-all' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body, /That is not the admin token\./);
    assert.equal(header(wrong, 'set-cookie'), undefined);
    const crossSite = await admin('/dashboard/login', { method: 'POST', headers: { ...FORM_TYPE, origin: 'http://evil.example' }, body: `token=${TOKEN}` });
    assert.equal(crossSite.status, 403);
    assert.equal(header(crossSite, 'set-cookie'), undefined);
    const asJson = await admin('/dashboard/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: TOKEN }) });
    assert.equal(asJson.status, 415);
    assert.equal(header(asJson, 'set-cookie'), undefined);
  });

  test('with the session: the views, and the /v1/ API with the CSRF token', async () => {
    const login = await logInOverHttp(svc.adminUrl, TOKEN);
    for (const view of ['', 'invalidation', 'bans', 'inspect', 'cluster', 'config']) {
      const page = await admin(`/dashboard/${view}`, { headers: { cookie: login.cookie } });
      assert.equal(page.status, 200, view);
      assert.match(page.body, /<script type="module" src="\/dashboard\/assets\/dashboard.js">/);
    }
    assert.equal(header(await admin('/dashboard/login', { headers: { cookie: login.cookie } }), 'location'), '/dashboard/');
    assert.equal((await admin('/v1/stats', { headers: login.apiHeaders(svc.adminUrl) })).status, 200);
    await fetchRaw(`${svc.dataUrl}/with-session`);
    assert.equal(await xCache('/with-session'), 'HIT');
    const purge = await post('/v1/purge', { url: `${svc.dataUrl}/with-session` }, login.apiHeaders(svc.adminUrl));
    assert.equal(purge.status, 200, purge.body);
    assert.equal(await xCache('/with-session'), 'MISS');
  });

  test('CSRF: a state change with the cookie but without its token, or from another origin, is refused and does nothing', async () => {
    const login = await logInOverHttp(svc.adminUrl, TOKEN);
    await fetchRaw(`${svc.dataUrl}/csrf`);
    const attempts: Record<string, string>[] = [
      { cookie: login.cookie },
      { cookie: login.cookie, 'x-csrf-token': 'forged' },
      { ...login.apiHeaders(svc.adminUrl), origin: 'http://127.0.0.1:1' },
      { ...login.apiHeaders(svc.adminUrl), 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of attempts) {
      const answer = await post('/v1/purge', { url: `${svc.dataUrl}/csrf` }, headers);
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.equal(json(answer).error?.code, 'csrf_rejected');
    }
    assert.equal(await xCache('/csrf'), 'HIT', 'nothing was purged');
    // A request that carries Authorization is judged by its bearer token alone, cookie or not.
    const bearerWrong = await post('/v1/purge', { url: `${svc.dataUrl}/csrf` }, { ...login.apiHeaders(svc.adminUrl), authorization: 'Bearer wrong' });
    assert.equal(json(bearerWrong).error?.code, 'invalid_token');
    assert.equal((await post('/v1/purge', { url: `${svc.dataUrl}/csrf` }, { authorization: `Bearer ${TOKEN}` })).status, 200);
  });

  test('logout needs the CSRF token, then ends the session everywhere', async () => {
    const login = await logInOverHttp(svc.adminUrl, TOKEN);
    const forged = await admin('/dashboard/logout', { method: 'POST', headers: { ...FORM_TYPE, cookie: login.cookie }, body: 'csrf=forged' });
    assert.equal(forged.status, 403);
    assert.equal((await admin('/v1/stats', { headers: login.apiHeaders(svc.adminUrl) })).status, 200, 'still logged in');
    const out = await admin('/dashboard/logout', { method: 'POST', headers: { ...FORM_TYPE, cookie: login.cookie }, body: `csrf=${login.csrf}` });
    assert.equal(out.status, 303);
    assert.equal(header(out, 'location'), '/dashboard/login?notice=logged_out');
    assert.match(header(out, 'set-cookie') ?? '', /^svc_session=; Max-Age=0;/);
    const replayed = await admin('/v1/stats', { headers: login.apiHeaders(svc.adminUrl) });
    assert.equal(replayed.status, 401);
    assert.equal(json(replayed).error?.code, 'session_expired');
    assert.equal(header(await admin('/dashboard/', { headers: { cookie: login.cookie } }), 'location'), '/dashboard/login?notice=expired');
  });

  test('the assets need no session, carry an ETag and revalidate to 304', async () => {
    const script = await admin('/dashboard/assets/dashboard.js');
    assert.equal(script.status, 200);
    assert.equal(header(script, 'content-type'), 'text/javascript; charset=utf-8');
    const etag = header(script, 'etag') ?? '';
    assert.match(etag, /^"[\w-]{22}"$/);
    assert.equal((await admin('/dashboard/assets/dashboard.js', { headers: { 'if-none-match': etag } })).status, 304);
    assert.equal(header(await admin('/dashboard/assets/dashboard.css'), 'content-type'), 'text/css; charset=utf-8');
    assert.equal((await admin('/dashboard/assets/other.js')).status, 404);
  });

  test('the validation endpoint answers with the forms\' rules, to a session or a token only', async () => {
    const login = await logInOverHttp(svc.adminUrl, TOKEN);
    const answer = await post('/dashboard/api/validate', { operation: 'ban', path_regex: '(' }, login.apiHeaders(svc.adminUrl));
    assert.equal(answer.status, 200);
    assert.equal(json(answer).valid, false);
    assert.deepEqual((json(answer).problems as { field: string }[]).map((problem) => problem.field), ['path_regex']);
    const good = await post('/dashboard/api/validate', { operation: 'purge', url: 'https://shop.example/' }, { authorization: `Bearer ${TOKEN}` });
    assert.deepEqual(json(good), { valid: true, problems: [] });
    assert.equal((await post('/dashboard/api/validate', { operation: 'drop' }, login.apiHeaders(svc.adminUrl))).status, 400);
    assert.equal((await post('/dashboard/api/validate', { operation: 'purge', url: 'x' }, {})).status, 401);
  });

  test('the summary adds up the node\'s metrics: requests by result and source, latency buckets, tiers', async () => {
    const login = await logInOverHttp(svc.adminUrl, TOKEN);
    const read = async () => {
      const answer = await admin('/dashboard/api/summary', { headers: login.apiHeaders(svc.adminUrl) });
      assert.equal(answer.status, 200);
      return JSON.parse(answer.body) as {
        requests: { total: number; by_cache_result: Record<string, number>; by_source: Record<string, number> };
        duration: { bounds_s: number[]; cumulative: number[] };
        tiers: { hot: { entries: number; max_bytes: number }; warm: null };
      };
    };
    const before = await read();
    await fetchRaw(`${svc.dataUrl}/summary`);
    await fetchRaw(`${svc.dataUrl}/summary`);
    const after = await read();
    assert.equal(after.requests.total - before.requests.total, 2);
    assert.equal(after.requests.by_cache_result.MISS! - before.requests.by_cache_result.MISS!, 1);
    assert.equal(after.requests.by_cache_result.HIT! - before.requests.by_cache_result.HIT!, 1);
    assert.equal(after.requests.by_source.origin! - before.requests.by_source.origin!, 1);
    assert.equal(after.requests.by_source.hot! - before.requests.by_source.hot!, 1);
    assert.equal(after.duration.cumulative.length, after.duration.bounds_s.length + 1);
    assert.equal(after.duration.cumulative.at(-1), after.requests.total);
    assert.ok(after.tiers.hot.entries >= 1);
    assert.equal(after.tiers.hot.max_bytes, 268435456);
    assert.equal(after.tiers.warm, null);
    assert.equal((await admin('/dashboard/api/summary')).status, 401);
  });
});

describe('sessions across time, admin tokens and TLS', () => {
  test('a session expires after 8 hours of the node\'s clock', async () => {
    const origin = await startTestOrigin();
    const svc = await startSvc([origin.url]);
    const admin = (path: string, headers: Record<string, string> = {}) => fetchRaw(`${svc.adminUrl}${path}`, { headers });
    try {
      const login = await logInOverHttp(svc.adminUrl, TOKEN);
      svc.clock.advance(SESSION_LIFETIME_MS - 60_000);
      assert.equal((await admin('/v1/stats', login.apiHeaders(svc.adminUrl))).status, 200);
      svc.clock.advance(60_000);
      const expired = await admin('/v1/stats', login.apiHeaders(svc.adminUrl));
      assert.equal(expired.status, 401);
      assert.equal(json(expired).error?.code, 'session_expired');
      assert.equal(header(expired, 'www-authenticate'), 'Bearer realm="svc"');
      assert.equal(header(await admin('/dashboard/', { cookie: login.cookie }), 'location'), '/dashboard/login?notice=expired');
      assert.match((await admin('/dashboard/login?notice=expired')).body, /Your session has ended\. Log in again\./);
    } finally {
      await svc.stop();
      await origin.close();
    }
  });

  test('a node with another admin token refuses the session; one with the same token accepts it', async () => {
    const origin = await startTestOrigin();
    const first = await startSvc([origin.url]);
    const login = await logInOverHttp(first.adminUrl, TOKEN).finally(() => first.stop());
    const changed = await startSvc([origin.url], { env: { SVC_ADMIN_TOKEN: 'a-new-admin-token-0123456789' } });
    const same = await startSvc([origin.url]);
    try {
      const refused = await fetchRaw(`${changed.adminUrl}/v1/stats`, { headers: login.apiHeaders(changed.adminUrl) });
      assert.equal(refused.status, 401);
      assert.equal(json(refused).error?.code, 'invalid_session');
      assert.equal(header(await fetchRaw(`${changed.adminUrl}/dashboard/`, { headers: { cookie: login.cookie } }), 'location'), '/dashboard/login');
      assert.equal((await fetchRaw(`${same.adminUrl}/v1/stats`, { headers: login.apiHeaders(same.adminUrl) })).status, 200);
    } finally {
      await changed.stop();
      await same.stop();
      await origin.close();
    }
  });

  test('over TLS the session cookie is also Secure', async () => {
    const router = new AdminRouter();
    const metrics = new NodeMetrics();
    const logger = createLogger({ destination: new LogCapture() });
    const rejections = createRejectionLog('admin', logger, metrics.edge.rejected);
    mountDashboardRoutes(router, {
      sessions: new DashboardSessions({ adminToken: () => TOKEN, now: Date.now }),
      adminToken: { value: TOKEN },
      authGuard: { limiter: new AuthFailureLimiter({ limit: 10, windowMs: 60_000, now: Date.now }), counter: metrics.edge.adminAuthFailures, logger, rejections },
      registry: metrics.registry,
      capacities: () => ({ hotMaxBytes: 1024, warmMaxBytes: undefined }),
      clusterMetrics: undefined,
      nodeName: undefined,
    });
    const http = createAdminServer(router, {
      logger,
      limits: { maxHeaderBytes: 16_384, maxHeaderFields: 100, headerTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 },
      bodyIdleTimeoutMs: 30_000,
      rejections,
      smugglingRejected: metrics.smugglingRejected,
    });
    const tls: TlsServer = createTlsServer(
      { key: readFileSync(`${TLS_DIR}node.key`), cert: readFileSync(`${TLS_DIR}node.crt`) },
      (socket) => http.emit('connection', socket),
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = tls.address() as AddressInfo;
      const setCookie = await new Promise<string | undefined>((resolve, reject) => {
        const request = httpsRequest(
          { host: '127.0.0.1', port, path: '/dashboard/login', method: 'POST', headers: FORM_TYPE, rejectUnauthorized: false },
          (response) => {
            response.resume();
            resolve(response.headers['set-cookie']?.[0]);
          },
        );
        request.on('error', reject);
        request.end(`token=${TOKEN}`);
      });
      assert.match(setCookie ?? '', /; HttpOnly; SameSite=Strict; Secure$/);
    } finally {
      await new Promise<void>((resolve) => tls.close(() => resolve()));
      http.closeAllConnections();
    }
  });
});
