// Takes the screenshots of docs/dashboard.md: every view of edge-a's dashboard in a three-node
// cluster with some traffic and invalidations behind it. Re-run after changing the dashboard:
//   npx tsc -p tsconfig.json && node dist/test/browser/take-screenshots.js
// It writes docs/images/dashboard-<view>.png (about 40 s: the Overview needs samples to chart), and
// dashboard-invalidation-no-js.png with JavaScript off.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { fetchRaw } from '../support/http.js';
import { launchBrowser, logIn } from './support/browser.js';
import { ADMIN_TOKEN, startDashboardCluster } from './support/dashboard-fixture.js';

const IMAGES = fileURLToPath(new URL('../../../docs/images/', import.meta.url));

async function admin(adminUrl: string, path: string, body: unknown): Promise<void> {
  const answer = await fetchRaw(`${adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.body}`);
}

const cluster = await startDashboardCluster();
const browser = await launchBrowser();
let traffic = true;
try {
  await mkdir(IMAGES, { recursive: true });
  const paths = await cluster.pathsOwnedByA('/products/', 12);
  // A steady mix: mostly hits on a few popular pages, some misses on pages never seen before.
  const load = (async () => {
    for (let i = 0; traffic; i++) {
      await cluster.get(i % 7 === 0 ? `/search?q=${i}` : (paths[i % paths.length] as string));
      await new Promise((resolve) => setTimeout(resolve, 15)); // the traffic's pace, not a wait on anything
    }
  })();
  await admin(cluster.a.adminUrl, '/v1/purge', { url: cluster.url(paths[0] as string) });
  await admin(cluster.a.adminUrl, '/v1/ban', { surrogate_key: 'product-3' });
  await admin(cluster.a.adminUrl, '/v1/ban', { host_regex: '^shop\\.example$', path_regex: '^/search' });
  await admin(cluster.b.adminUrl, '/v1/refresh', { url: cluster.url(paths[1] as string) });
  await admin(cluster.a.adminUrl, '/v1/purge/batch', { urls: paths.slice(4, 7).map(cluster.url) });

  const { page } = await browser.open({ width: 1280, height: 900 });
  await page.goto(`${cluster.a.adminUrl}/dashboard/login`);
  await page.screenshot({ path: `${IMAGES}dashboard-login.png` });
  await logIn(page, cluster.a.adminUrl, ADMIN_TOKEN);
  // Twelve samples, so the charts have a history.
  await page.waitForTimeout(36_000);
  await page.screenshot({ path: `${IMAGES}dashboard-overview.png`, fullPage: true });
  traffic = false;
  await load;

  await page.goto(`${cluster.a.adminUrl}/dashboard/invalidation`);
  await page.getByLabel('Path regex').fill('^/img/(');
  await page.getByRole('button', { name: 'Ban' }).click();
  await page.getByText('not a valid RE2 expression').waitFor();
  await page.locator('#recent-list li').first().waitFor();
  await page.screenshot({ path: `${IMAGES}dashboard-invalidation.png`, fullPage: true });

  await page.goto(`${cluster.a.adminUrl}/dashboard/bans`);
  await page.locator('#bans-table tbody tr').first().waitFor();
  await page.screenshot({ path: `${IMAGES}dashboard-bans.png`, fullPage: true });

  await page.goto(`${cluster.a.adminUrl}/dashboard/inspect`);
  await page.getByLabel('URL to inspect').fill(cluster.url(paths[3] as string));
  await page.getByRole('button', { name: 'Inspect' }).click();
  await page.getByRole('heading', { name: 'What svc holds' }).waitFor();
  await page.screenshot({ path: `${IMAGES}dashboard-inspect.png`, fullPage: true });

  await page.goto(`${cluster.a.adminUrl}/dashboard/cluster`);
  await page.locator('#peers-table tbody tr').nth(2).waitFor();
  // The second reading of each member, which gives its rates.
  await page.locator('#traffic-table [data-cell="rps"]', { hasNotText: '–' }).nth(2).waitFor();
  await page.screenshot({ path: `${IMAGES}dashboard-cluster.png`, fullPage: true });

  await page.goto(`${cluster.a.adminUrl}/dashboard/config`);
  await page.locator('#config-json', { hasText: 'pools' }).waitFor();
  await page.screenshot({ path: `${IMAGES}dashboard-config.png` });

  // The Invalidation view as a browser without JavaScript shows it: no forms, the CLI named instead.
  const plain = await launchBrowser({ javaScript: false });
  try {
    const { page: bare } = await plain.open({ width: 1280, height: 900 });
    await logIn(bare, cluster.a.adminUrl, ADMIN_TOKEN, 'invalidation');
    await bare.screenshot({ path: `${IMAGES}dashboard-invalidation-no-js.png`, fullPage: true });
  } finally {
    await plain.close();
  }

  const { page: phone } = await browser.open({ width: 390, height: 844 });
  // The same browser profile: the session cookie is already there.
  await phone.goto(`${cluster.a.adminUrl}/dashboard/invalidation`);
  await phone.locator('#recent-list li').first().waitFor();
  await phone.screenshot({ path: `${IMAGES}dashboard-narrow.png` });
  process.stdout.write(`screenshots written to ${IMAGES}\n`);
} finally {
  traffic = false;
  await browser.close();
  await cluster.close();
}
