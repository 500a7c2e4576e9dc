// Issue 30 item 9 in a real browser (Chromium through playwright-core) against a real cluster of three
// `svc serve` processes: the Cluster view of one node lists every member with its request rate, hit
// ratio and tiers, read from each member's /v1/peer/metrics by the node that serves the page; a member
// killed while the page is open is shown as unavailable, and the page keeps working.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { fetchRaw } from '../support/http.js';
import { eventually } from '../support/eventually.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, CLUSTER_TOKEN, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import { launchBrowser, logIn, type TestBrowser, type WatchedPage } from './support/browser.js';

const SITE = 'shop.example';
/** The view polls every 3 s: a change shows within one poll; three is a safe bound. */
const POLL_BOUND_MS = 10_000;

async function text(locator: Locator): Promise<string> {
  return (await locator.innerText()).replace(/\s+/g, ' ').trim();
}

function row(page: Page, name: string): Locator {
  return page.locator('#traffic-table tbody tr').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^${name}\\b`) }) });
}

async function get(node: ClusterNodeProcess, path: string): Promise<void> {
  await fetchRaw(`${node.dataUrl}${path}`, { headers: { host: SITE } });
}

describe('the Cluster view in a browser, with a real cluster', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;
  let browser: TestBrowser;
  let main: WatchedPage;
  let page: Page;

  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `page ${request.url}\n`.repeat(100) }));
    [cluster, browser] = await Promise.all([
      startSvcCluster({ names: ['a', 'b', 'c'], mode: 'eventual', originUrl: origin.url, clusterKeys: 'peer_timeout: 500ms' }),
      launchBrowser(),
    ]);
    // Each node caches its own copies (eventual mode): b three pages, a and c one each.
    for (const path of ['/one', '/two', '/three']) await get(cluster.node('b'), path);
    await get(cluster.node('a'), '/one');
    await get(cluster.node('c'), '/one');
    main = await browser.open();
    page = main.page;
  });

  after(async () => {
    await browser?.close();
    await cluster?.close();
    await origin?.close();
  });

  test('every member is listed with its rates, hit ratio and tiers', async () => {
    await logIn(page, cluster.node('a').adminUrl, CLUSTER_TOKEN, 'cluster');
    await page.locator('#traffic-table').getByRole('rowheader', { name: 'a (this node)' }).waitFor();
    for (const name of ['b', 'c']) await row(page, name).locator('[data-cell="hot"]').waitFor();
    assert.match(await text(row(page, 'b').locator('[data-cell="hot"]')), / · 3 entries$/);
    assert.match(await text(row(page, 'c').locator('[data-cell="hot"]')), / · 1 entries$/);
    // The first reading has no rate yet; its ratio is since the member started (three misses on b).
    // Then requests to b between two readings: a rate above 0 and the hits of the interval.
    const stream = setInterval(() => void get(cluster.node('b'), '/one'), 50);
    try {
      const b = row(page, 'b');
      await eventually(
        "b's rate and the interval's hit ratio",
        async () => [await text(b.locator('[data-cell="rps"]')), await text(b.locator('[data-cell="hit_ratio"]'))] as const,
        ([rps, ratio]) => Number(rps) > 0 && ratio === '100%',
        { timeoutMs: POLL_BOUND_MS, everyMs: 200 },
      );
    } finally {
      clearInterval(stream);
    }
    // c had no request: its rate is 0 once two of its readings were answered in a row (a reading
    // that missed the peer timeout shows no rate, '–', until the next one).
    await eventually("c's rate", () => text(row(page, 'c').locator('[data-cell="rps"]')), (rps) => rps === '0', { timeoutMs: POLL_BOUND_MS, everyMs: 200 });
    assert.equal(await page.locator('#page-error').isHidden(), true);
    assert.deepEqual(main.errors, []);
  });

  test('a member killed while the page is open is shown as unavailable, and the others still are', async () => {
    await cluster.kill('c');
    await row(page, 'c').filter({ hasText: /no answer within 500 ms|unreachable|not asked: dead|suspect/ }).waitFor({ timeout: POLL_BOUND_MS });
    assert.equal(await row(page, 'c').locator('[data-cell="hot"]').count(), 0, 'no figures for c');
    assert.match(await text(row(page, 'c')), /^c (suspect|alive|dead) · /);
    assert.match(await text(row(page, 'b').locator('[data-cell="hot"]')), / · 3 entries$/);
    assert.equal(await page.locator('#page-error').isHidden(), true);
    assert.deepEqual(main.errors, []);
  });
});
