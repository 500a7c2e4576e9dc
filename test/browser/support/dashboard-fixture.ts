// What the dashboard's browser tests and screenshots look at: a real origin and a real three-node
// cluster in this process. edge-a (the node whose dashboard is opened, with a warm tier) and edge-b
// run in strong mode; edge-c runs in eventual mode, a mode drift the Cluster view must show.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../bench/support/free-port.js';
import { eventually } from '../../support/eventually.js';
import { fetchRaw } from '../../support/http.js';
import { startSvc, type SvcUnderTest } from '../../support/svc-harness.js';
import { startTestOrigin, type TestOrigin } from '../../support/test-origin.js';
import { CLUSTER_SECRET } from '../../support/svc-cluster.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const SITE = 'shop.example';

export interface DashboardCluster {
  origin: TestOrigin;
  a: SvcUnderTest;
  b: SvcUnderTest;
  c: SvcUnderTest;
  /** The URL (on SITE) of `path`, as the operator types it. */
  url(path: string): string;
  /** A GET through edge-a's data plane; answers X-Cache. */
  get(path: string): Promise<string | undefined>;
  /** `count` paths under `prefix` whose keys edge-a owns, so their entries live on edge-a. */
  pathsOwnedByA(prefix: string, count: number): Promise<string[]>;
  /** Origin requests for `path` so far. */
  originHits(path: string): number;
  close(): Promise<void>;
}

/**
 * Pages tagged by product (`/products/7` carries surrogate keys `product-7 catalog`), cacheable for
 * ten minutes, with an ETag the origin honours, so a refresh revalidates with a 304.
 */
function startShopOrigin(): Promise<TestOrigin> {
  return startTestOrigin((request) => {
    const path = request.url ?? '/';
    const product = /^\/products\/(\w+)/.exec(path)?.[1];
    const headers = {
      'cache-control': 'max-age=600',
      etag: '"v1"',
      'content-type': 'text/plain',
      ...(product ? { 'surrogate-key': `product-${product} catalog` } : {}),
    };
    if (request.headers['if-none-match'] === '"v1"') return { status: 304, headers };
    return { headers, body: `page ${path}\n`.repeat(200) };
  });
}

export async function startDashboardCluster(): Promise<DashboardCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-dashboard-'));
  const origin = await startShopOrigin();
  const started: SvcUnderTest[] = [];
  const ports = { a: await freePort(), b: await freePort(), c: await freePort() };
  const node = async (name: string, mode: 'strong' | 'eventual', port: number, extra: Record<string, unknown> = {}) => {
    const svc = await startSvc([origin.url], {
      config: {
        hop_limit: 2,
        cluster: { mode, node_name: name, secret: CLUSTER_SECRET, bind: `127.0.0.1:${port}`, join: port === ports.a ? [] : [`127.0.0.1:${ports.a}`] },
        ...extra,
      },
    });
    started.push(svc);
    return svc;
  };
  const close = async (): Promise<void> => {
    for (const svc of started.reverse()) await svc.stop();
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const a = await node('edge-a', 'strong', ports.a, { warm: { path: join(dir, 'warm-a'), max_bytes: 64 * 1024 * 1024 } });
    const b = await node('edge-b', 'strong', ports.b);
    const c = await node('edge-c', 'eventual', ports.c);
    await eventually(
      'edge-a to see three live members',
      async () => (JSON.parse((await fetchRaw(`${a.adminUrl}/v1/cluster/peers`)).body) as { state: string }[]).filter((peer) => peer.state === 'alive').length,
      (alive) => alive === 3,
      { timeoutMs: 20_000, everyMs: 100 },
    );
    const url = (path: string): string => `http://${SITE}${path}`;
    return {
      origin,
      a,
      b,
      c,
      url,
      async get(path) {
        const answer = await fetchRaw(`${a.dataUrl}${path}`, { headers: { host: SITE } });
        const value = answer.headers['x-cache'];
        return Array.isArray(value) ? value.join(', ') : value;
      },
      async pathsOwnedByA(prefix, count) {
        const paths: string[] = [];
        for (let i = 0; paths.length < count && i < 500; i++) {
          const path = `${prefix}${i}`;
          const stats = await fetchRaw(`${a.adminUrl}/v1/stats?url=${encodeURIComponent(url(path))}`, {
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          });
          if ((JSON.parse(stats.body) as { ring: { owner: string } }).ring.owner === 'edge-a') paths.push(path);
        }
        if (paths.length < count) throw new Error(`fewer than ${count} paths under ${prefix} are owned by edge-a`);
        return paths;
      },
      originHits: (path) => origin.requests.filter((request) => request.url === path && request.method === 'GET').length,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
