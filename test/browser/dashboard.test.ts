// Issue 20 in a real browser (Debian's chromium through playwright-core) against a real three-node
// cluster and origin: logging in, each form's validation messages, each operation's effect on what
// svc serves, the Recent invalidations list (this dashboard, the API, another node), every view, the
// keyboard, a narrow screen, CSRF rejection, logout, and no console errors on the way; then, on one
// node, a server refusal shown in words and session expiry by the node's clock. Issue 30 item 6: with
// JavaScript off, no view shows a form that does nothing or says something false; tier sizes are
// charted in the unit that fits them; the Bans view says why a ban cannot be lifted.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { SESSION_LIFETIME_MS } from '../../src/admin/dashboard/dashboard-session.js';
import { fetchRaw } from '../support/http.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startTestOrigin } from '../support/test-origin.js';
import { logInOverHttp } from '../dashboard/support/dashboard-login.js';
import { launchBrowser, logIn, type TestBrowser, type WatchedPage } from './support/browser.js';
import { ADMIN_TOKEN, startDashboardCluster, type DashboardCluster } from './support/dashboard-fixture.js';

/** The polls run every 3 s: a change made elsewhere shows within one, twice that is a safe bound. */
const POLL_BOUND_MS = 8_000;

async function api(adminUrl: string, path: string, body: unknown): Promise<void> {
  const answer = await fetchRaw(`${adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(answer.status, 200, answer.body);
}

/** What the element shows, its parts one space apart (cells and list items end lines in innerText). */
async function text(locator: Locator): Promise<string> {
  return (await locator.innerText()).replace(/\s+/g, ' ').trim();
}

/** The text of the newest Recent invalidations entry. */
function newestRecent(page: Page): Promise<string> {
  return text(page.locator('#recent-list li').first());
}

/** Only network errors with these statuses, which the scenario provokes on purpose. */
function onlyExpected(errors: readonly string[], statuses: readonly number[]): string[] {
  return errors.filter((error) => !statuses.some((status) => error.includes(`the server responded with a status of ${status}`)));
}

/** What the strong cluster's fan-out did, as the form's status says it (dashboard.js `reach`). */
const REACH = String.raw` (Confirmed by every other node \(\d+\)|Not confirmed by \d+ of \d+ other nodes: [\w, -]+; gossip and catch-up still bring it to them)\.`;

describe('the dashboard in a browser', () => {
  let cluster: DashboardCluster;
  let browser: TestBrowser;
  let main: WatchedPage;
  let page: Page;
  let paths: string[];
  const adminUrl = (): string => cluster.a.adminUrl;

  before(async () => {
    [cluster, browser] = await Promise.all([startDashboardCluster(), launchBrowser()]);
    paths = await cluster.pathsOwnedByA('/products/', 6);
    for (const path of paths) await cluster.get(path);
    main = await browser.open();
    page = main.page;
  });
  after(async () => {
    await browser?.close();
    await cluster?.close();
  });

  test('the login page is a plain form without script; a wrong token is refused in words, the right one logs in', async () => {
    const login = await browser.open();
    await login.page.goto(`${adminUrl()}/dashboard/invalidation`);
    assert.equal(new URL(login.page.url()).pathname, '/dashboard/login');
    assert.equal(await login.page.locator('script').count(), 0, 'the login page needs no JavaScript');
    await login.page.getByLabel('Admin token').fill('not-the-admin-token');
    await login.page.getByRole('button', { name: 'Log in' }).click();
    await login.page.getByRole('alert').filter({ hasText: 'That is not the admin token.' }).waitFor();
    assert.deepEqual(onlyExpected(login.errors, [401]), []);
    await login.page.close();

    await logIn(page, adminUrl(), ADMIN_TOKEN, 'invalidation');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Invalidation');
  });

  test('each form shows its validation messages and sends nothing until they are fixed', async () => {
    const countsBefore = cluster.a.node.invalidator.counts();
    const submit = async (form: string, button: string, expected: RegExp) => {
      await page.locator(`#form-${form}`).getByRole('button', { name: button }).click();
      await page.locator(`#form-${form} .field-error:not([hidden])`).filter({ hasText: expected }).first().waitFor();
      assert.match(await text(page.locator(`#form-${form} .form-status`)), /Not sent/);
    };
    await page.locator('#purge-url').fill('shop.example/products/1');
    await submit('purge', 'Purge URL', /must begin with http:\/\/ or https:\/\//);
    assert.equal(await page.locator('#purge-url').getAttribute('aria-invalid'), 'true');
    await page.locator('#purge-url').fill('https://');
    await submit('purge', 'Purge URL', /must include a host/);
    await page.locator('#purge-url').fill('');

    await submit('refresh', 'Refresh URL', /Enter a URL/);
    await page.locator('#refresh-url').fill('ftp://shop.example/a');
    await submit('refresh', 'Refresh URL', /must begin with http:\/\/ or https:\/\//);
    await page.locator('#refresh-url').fill('');

    await submit('ban', 'Ban', /Fill in at least one field: host regex, path regex or surrogate key/);
    await page.locator('#ban-host_regex').fill('(shop');
    await page.locator('#ban-path_regex').fill('(?=lookahead)');
    await submit('ban', 'Ban', /host_regex is not a valid RE2 expression: missing \)/);
    assert.match(await text(page.locator('#ban-path_regex-error')), /path_regex is not a valid RE2 expression/);
    await page.locator('#ban-host_regex').fill('');
    await page.locator('#ban-path_regex').fill('');

    await page.locator('#purge_batch-urls').fill(`${cluster.url('/a')}\nshop.example/b\n\nhttp://`);
    await submit('purge_batch', 'Purge URLs', /Line 2: The URL must begin with http:\/\/ or https:\/\/\. Line 3: The URL must include a host/);
    await page.locator('#purge_batch-urls').fill('');

    assert.deepEqual(cluster.a.node.invalidator.counts(), countsBefore, 'no form was sent');
  });

  test('purge, refresh, ban and batch purge change what svc serves, and each lands in Recent at once', async () => {
    const [purged, refreshed, banned, batchOne, batchTwo] = paths as [string, string, string, string, string];
    for (const path of [purged, refreshed, banned, batchOne, batchTwo]) assert.equal(await cluster.get(path), 'HIT', path);
    const send = async (form: string, button: string, done: RegExp) => {
      await page.locator(`#form-${form}`).getByRole('button', { name: button }).click();
      await page.locator(`#form-${form} .form-status.ok`).filter({ hasText: done }).waitFor();
    };

    await page.locator('#purge-url').fill(` ${cluster.url(purged)} `);
    await send('purge', 'Purge URL', new RegExp(String.raw`^Purged http://shop\.example/products/\d+: \d+ stored variants removed on this node\.${REACH}$`));
    assert.match(await newestRecent(page), new RegExp(`Purge\\s+${cluster.url(purged)}.*just now`));
    assert.equal(await page.locator('#purge-url').inputValue(), '', 'the form is cleared after success');
    const originBefore = cluster.originHits(purged);
    assert.equal(await cluster.get(purged), 'MISS');
    assert.equal(cluster.originHits(purged), originBefore + 1);

    await page.locator('#refresh-url').fill(cluster.url(refreshed));
    await send('refresh', 'Refresh URL', /^Marked .* stale/);
    assert.match(await newestRecent(page), /Refresh\s+.*[1-9]\d* marked stale.*just now/);
    assert.equal(await cluster.get(refreshed), 'REVALIDATED');

    const tag = `product-${banned.split('/').pop()}`;
    await page.locator('#ban-surrogate_key').fill(tag);
    await send('ban', 'Ban', new RegExp(`^Banned surrogate_key=${tag}: 1 hot-tier entries evicted`));
    assert.match(await newestRecent(page), new RegExp(`Ban\\s+surrogate_key=${tag}\\s+1 evicted.*just now`));
    assert.equal(await cluster.get(banned), 'MISS');

    await page.locator('#purge_batch-urls').fill(`${cluster.url(batchOne)}\n\n${cluster.url(batchTwo)}\n`);
    await send('purge_batch', 'Purge URLs', new RegExp(String.raw`^Purged 2 URLs: [1-9]\d* stored variants removed on this node\.${REACH}$`));
    assert.match(await newestRecent(page), /Batch purge\s+2 URLs.*just now/);
    assert.equal(await cluster.get(batchOne), 'MISS');
    assert.equal(await cluster.get(batchTwo), 'MISS');
  });

  test('Recent also shows invalidations made through the API and on another node', async () => {
    await api(adminUrl(), '/v1/purge', { url: cluster.url('/via-api') });
    await page.locator('#recent-list li').first().filter({ hasText: cluster.url('/via-api') }).waitFor({ timeout: POLL_BOUND_MS });
    await api(cluster.b.adminUrl, '/v1/ban', { path_regex: '^/made-on-edge-b$' });
    await page.locator('#recent-list li').first().filter({ hasText: 'path_regex=^/made-on-edge-b$' }).waitFor({ timeout: POLL_BOUND_MS });
  });

  test('without JavaScript: no form that does nothing, nothing that claims to be empty, and the CLI named instead', async () => {
    assert.ok(cluster.a.node.invalidator.recent().length > 0, 'there are invalidations to not deny');
    const plain = await launchBrowser({ javaScript: false });
    try {
      const { page: bare } = await plain.open();
      // The login form is a plain form: it works without script.
      await logIn(bare, adminUrl(), ADMIN_TOKEN, 'invalidation');
      for (const view of ['', 'invalidation', 'bans', 'inspect', 'cluster', 'config']) {
        await bare.goto(`${adminUrl()}/dashboard/${view}`);
        const forms = bare.locator('form:visible');
        assert.equal(await forms.count(), 1, `/dashboard/${view}: only the logout form is shown`);
        assert.equal(await forms.getByRole('button').innerText(), 'Log out');
        assert.equal(await bare.getByText(/No invalidations yet|No active bans|runs alone|Waiting for the first samples/).filter({ visible: true }).count(), 0, `/dashboard/${view}`);
        // Read from the rendered text: playwright's text locators do not look inside <noscript>.
        assert.match(await text(bare.locator('main')), /This view needs JavaScript to load its data\./, `/dashboard/${view}`);
      }
      await bare.goto(`${adminUrl()}/dashboard/invalidation`);
      assert.match(await text(bare.locator('main')), /Without JavaScript, invalidate with the CLI: svc purge <url>, svc refresh <url>, svc ban /);
      await bare.goto(`${adminUrl()}/dashboard/bans`);
      assert.match(await text(bare.locator('#bans-lifting')), /^A ban cannot be lifted, here or through the API or the CLI: the spec's admin API \(§4\.1\) has no call that removes one/);
      // Logging out is a plain form too.
      await bare.getByRole('button', { name: 'Log out' }).click();
      await bare.getByRole('status').filter({ hasText: 'You are logged out.' }).waitFor();
    } finally {
      await plain.close();
    }
  });

  test('Overview: hit ratio, rates, latency, tiers and evictions, charted as samples arrive', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.waitForURL(`${adminUrl()}/dashboard/`);
    for (let i = 0; i < 20; i++) await cluster.get(paths[5] as string);
    // Two samples make the first rates; the first one comes at once, the next 3 s later.
    await page.locator('#chart-results svg polyline, #chart-results svg circle').first().waitFor({ timeout: POLL_BOUND_MS });
    assert.match(await text(page.locator('[data-stat="hit_ratio_total"]')), /^since start: \d+(\.\d)?%$/);
    assert.match(await text(page.locator('[data-stat="hot"]')), /KiB$/);
    assert.match(await text(page.locator('[data-stat="warm_entries"]')), /^of 64 MiB, \d+ entries$/);
    assert.match(await text(page.locator('[data-stat="latency"]')), /ms$/);
    const label = (await page.locator('#chart-results svg').getAttribute('aria-label')) ?? '';
    assert.match(label, /^Requests per second by cache result, latest: HIT [\d.]+ req\/s, MISS/);
    for (const chart of ['sources', 'hit-ratio', 'latency', 'tiers', 'evictions']) {
      assert.equal(await page.locator(`#chart-${chart} svg.plot`).count(), 1, chart);
    }
    // Tier sizes in the unit that fits them: the legend says what the card says, and a tier of a few
    // KiB does not put 0 on every tick of a MiB axis.
    const hot = await text(page.locator('[data-stat="hot"]'));
    assert.equal(await text(page.locator('#chart-tiers ul.legend li').first()), `hot ${hot}`);
    const unit = /\((B|KiB|MiB|GiB)\)$/.exec(await text(page.locator('#chart-tiers figcaption')))?.[1];
    assert.ok(unit !== undefined, 'the caption names the unit');
    const ticks = await page.locator('#chart-tiers text.tick').allTextContents();
    assert.equal(new Set(ticks).size, ticks.length, `every tick has its own value: ${ticks.join(', ')}`);
    assert.match((await page.locator('#chart-tiers svg').getAttribute('aria-label')) ?? '', new RegExp(`^Tier sizes \\(${unit}\\), latest: hot ${hot}`));
  });

  test('Bans: the active bans with their age, newest first, and why none can be lifted', async () => {
    await page.getByRole('link', { name: 'Bans' }).click();
    assert.match(await text(page.locator('#bans-lifting')), /cannot be lifted.*It ends by itself 24 hours after it was made/);
    const rows = page.locator('#bans-table tbody tr');
    await rows.first().waitFor();
    assert.match(await text(rows.first()), /path_regex=\^\/made-on-edge-b\$\s+\d+ s\s+23 h 59 min/);
    assert.match(await text(rows.nth(1)), /surrogate_key=product-\w+/);
    // What each matched on this node: the ban made here evicted the one entry it named (as its answer
    // said); the ban from edge b matched nothing here, and no lookup has been refused because of it.
    const counts = async (row: number): Promise<string[]> =>
      Promise.all([3, 4].map(async (cell) => text(rows.nth(row).locator('td').nth(cell))));
    assert.deepEqual(await counts(0), ['0', '0']);
    assert.equal((await counts(1))[0], '1');
    assert.match((await counts(1))[1] ?? '', /^\d+$/);
  });

  test('URL inspector: cached or not, tier, owner, age, freshness, variants, tags and the bans that match', async () => {
    await page.getByRole('link', { name: 'URL inspector' }).click();
    await page.getByLabel('URL to inspect').fill('not a url');
    await page.getByRole('button', { name: 'Inspect' }).click();
    await page.locator('#inspect-url-error').filter({ hasText: /must begin with http/ }).waitFor();

    await page.getByLabel('URL to inspect').fill(cluster.url(paths[5] as string));
    await page.getByRole('button', { name: 'Inspect' }).click();
    const result = page.locator('#inspect-result');
    await result.getByRole('heading', { name: 'What svc holds' }).waitFor();
    const shown = await text(result);
    assert.match(shown, /Cached\s+Yes, fresh: a plain GET is a HIT from the hot tier\./);
    assert.match(shown, /Owner node\s+edge-a/);
    assert.match(shown, /Freshness\s+fresh for \d+ min/);
    assert.match(shown, new RegExp(`Tags\\s+product-${paths[5]!.split('/').pop()} catalog`));
    // One variant, held in both tiers: counted once, listed as two copies.
    assert.match(shown, /Stored variants \(1; copies by tier below\)/);
    assert.deepEqual(await result.locator('tbody tr td:first-child').allTextContents(), ['hot', 'warm']);

    // A URL an active ban matches: the ban is listed.
    await page.getByLabel('URL to inspect').fill(cluster.url('/made-on-edge-b'));
    await page.getByRole('button', { name: 'Inspect' }).click();
    await result.getByText('No: nothing is stored for this URL on this node.').waitFor();
    assert.match(await text(result), /Active bans that match \(1\)\s+path_regex=\^\/made-on-edge-b\$ made/);
  });

  test('Cluster: every member with state, mode and ring share, and the mode drift highlighted', async () => {
    await page.getByRole('link', { name: 'Cluster' }).click();
    const rows = page.locator('#peers-table tbody tr');
    await rows.nth(2).waitFor();
    const table = await text(page.locator('#peers-table tbody'));
    for (const name of ['edge-a', 'edge-b', 'edge-c']) assert.match(table, new RegExp(`${name}\\s+alive`));
    assert.match(table, /edge-a\s+alive\s+strong\s+\d+(\.\d)?%/);
    assert.equal(await page.locator('#peers-table tr.drift').count(), 1);
    assert.match(await text(page.locator('#peers-table tr.drift')), /edge-c\s+alive\s+eventual \(mode drift\)/);
    assert.match(await text(page.locator('#drift')), /^Mode drift: edge-c runs another cluster\.mode than this node\./);
  });

  test('Config: the running configuration with secrets redacted, and the version', async () => {
    await page.getByRole('link', { name: 'Config' }).click();
    await page.locator('#config-json', { hasText: '"pools"' }).waitFor();
    const config = await text(page.locator('#config-json'));
    assert.match(config, /"token": "\[redacted\]"/);
    assert.doesNotMatch(config, new RegExp(ADMIN_TOKEN));
    assert.doesNotMatch(await page.content(), new RegExp(ADMIN_TOKEN));
    assert.match(await text(page.locator('#version')), /Version\s+0\.\d+\.\d+/);
    const threads = /Data-plane threads\s+(\d+) serving one cache/.exec(await text(page.locator('#version')))?.[1];
    assert.equal(Number(threads), (JSON.parse(config) as { workers: number }).workers, 'the count the node runs, as /v1/config resolves it');
    assert.ok(Number(threads) >= 1);
  });

  test('keyboard: the skip link comes first, and a purge can be sent without a mouse', async () => {
    const keys = await browser.open();
    await keys.page.goto(`${adminUrl()}/dashboard/invalidation`);
    await keys.page.keyboard.press('Tab');
    const focused = (property: string) => keys.page.evaluate(`document.activeElement?.${property}`);
    assert.equal(await focused('textContent'), 'Skip to content');
    await keys.page.keyboard.press('Enter');
    await keys.page.keyboard.press('Tab');
    assert.equal(await focused('id'), 'purge-url');
    await keys.page.keyboard.type(cluster.url('/by-keyboard'));
    await keys.page.keyboard.press('Enter');
    await keys.page.locator('#form-purge .form-status.ok').waitFor();
    assert.match(await newestRecent(keys.page), /by-keyboard/);
    assert.deepEqual(keys.errors, []);
    await keys.page.close();
  });

  test('a narrow screen: every view fits its width', async () => {
    const phone = await browser.open({ width: 360, height: 740 });
    for (const view of ['', 'invalidation', 'bans', 'inspect', 'cluster', 'config']) {
      await phone.page.goto(`${adminUrl()}/dashboard/${view}`);
      await phone.page.locator('main h1').waitFor();
      await phone.page.waitForLoadState('networkidle');
      const overflow = await phone.page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      assert.ok(overflow <= 0, `/dashboard/${view} is ${overflow}px wider than the screen`);
    }
    assert.deepEqual(phone.errors, []);
    await phone.page.close();
  });

  test('CSRF: another origin\'s page cannot log out or purge, though the browser sends the cookie', async () => {
    const path = paths[5] as string;
    assert.equal(await cluster.get(path), 'HIT');
    // Another origin on the same host: same-site, so SameSite=Strict does not stop the cookie; only
    // the CSRF token and the Origin check do.
    const evil = await startTestOrigin(() => ({
      headers: { 'content-type': 'text/html' },
      body: `<form method="post" action="${adminUrl()}/dashboard/logout"><input name="csrf" value="guess"><button>Win a prize</button></form>`,
    }));
    const attacker = await browser.open();
    try {
      await attacker.page.goto(`${evil.url}/prize`);
      const forged = attacker.page.waitForResponse((response) => response.url() === `${adminUrl()}/v1/purge`);
      await attacker.page.evaluate(
        // A "simple" request: no preflight, so it reaches svc, cookie included.
        ({ admin, url }) => fetch(`${admin}/v1/purge`, { method: 'POST', mode: 'no-cors', credentials: 'include', body: JSON.stringify({ url }) }).then(() => undefined),
        { admin: adminUrl(), url: cluster.url(path) },
      );
      // 403 csrf_rejected, not 401 missing_token: the cookie came along, and the check refused it.
      assert.equal((await forged).status(), 403);
      await attacker.page.getByRole('button', { name: 'Win a prize' }).click();
      await attacker.page.getByText(/Not logged out/).waitFor();
    } finally {
      await attacker.page.close();
      await evil.close();
    }
    assert.equal(await cluster.get(path), 'HIT', 'the forged purge did nothing');
    // The operator's own page still works: the session was not ended.
    await page.getByRole('link', { name: 'Bans' }).click();
    await page.locator('#bans-table tbody tr').first().waitFor();

    // The dashboard's own origin, but without the session's CSRF token: refused too.
    const direct = await browser.open();
    await direct.page.goto(`${adminUrl()}/dashboard/bans`);
    const answer = await direct.page.evaluate(async (url) => {
      const response = await fetch('/v1/purge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
      return { status: response.status, body: (await response.json()) as { error: { code: string } } };
    }, cluster.url(path));
    assert.equal(answer.status, 403);
    assert.equal(answer.body.error.code, 'csrf_rejected');
    assert.equal(await cluster.get(path), 'HIT');
    assert.deepEqual(onlyExpected(direct.errors, [403]), []);
    await direct.page.close();
  });

  test('logout ends the session: the page shows the login form, the API refuses the old cookie', async () => {
    await page.getByRole('link', { name: 'Invalidation' }).click();
    const cookie = (await browser.context.cookies(adminUrl())).find((item) => item.name === 'svc_session');
    assert.ok(cookie, 'the session cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('status').filter({ hasText: 'You are logged out.' }).waitFor();
    const replay = await fetchRaw(`${adminUrl()}/v1/stats`, { headers: { cookie: `svc_session=${cookie.value}` } });
    assert.equal(replay.status, 401);
    assert.equal((await browser.context.cookies(adminUrl())).some((item) => item.name === 'svc_session'), false);
  });

  test('no console errors on the operator\'s page', () => {
    assert.deepEqual(main.errors, []);
  });
});

describe('the dashboard on one node: refusals and expiry', () => {
  let svc: SvcUnderTest;
  let browser: TestBrowser;

  before(async () => {
    [svc, browser] = await Promise.all([startSvc(['http://127.0.0.1:1']), launchBrowser()]);
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  test('a refusal by the server is shown in its words', async () => {
    const { page, errors } = await browser.open();
    await logIn(page, svc.adminUrl, ADMIN_TOKEN, 'invalidation');
    // Logging in again elsewhere replaces the cookie: this page's CSRF token belongs to the old session.
    const [name, value] = (await logInOverHttp(svc.adminUrl, ADMIN_TOKEN)).cookie.split('=') as [string, string];
    await browser.context.addCookies([{ name, value, url: svc.adminUrl }]);
    await page.locator('#purge-url').fill('https://shop.example/stale-tab');
    await page.getByRole('button', { name: 'Purge URL', exact: true }).click();
    await page.locator('#form-purge .form-status.error').filter({ hasText: /^svc refused it: the CSRF token is not this dashboard session's; reload the page$/ }).waitFor();
    assert.deepEqual(onlyExpected(errors, [403]), []);
    await page.close();
  });

  test('after 8 hours of the node\'s clock the next poll takes the page to the login form, which says why', async () => {
    const { page, errors } = await browser.open();
    await page.goto(`${svc.adminUrl}/dashboard/bans`);
    await page.locator('#bans-empty:not([hidden])').waitFor();
    svc.clock.advance(SESSION_LIFETIME_MS);
    await page.waitForURL(`${svc.adminUrl}/dashboard/login?next=%2Fdashboard%2Fbans&notice=expired`, { timeout: POLL_BOUND_MS });
    await page.getByRole('status').filter({ hasText: 'Your session has ended. Log in again.' }).waitFor();
    // Logging in again returns to the view that was open.
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${svc.adminUrl}/dashboard/bans`);
    assert.deepEqual(onlyExpected(errors, [401]), []);
  });
});
