// Issue 7, strong mode, with three real `svc serve` processes on 127.0.0.1.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, clusterAdmin, pathsOwnedBy, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';

const SITE = 'shop.example';

async function get(node: ClusterNodeProcess, path: string) {
  return fetchRaw(`${node.dataUrl}${path}`, { headers: { host: SITE } });
}

const admin = clusterAdmin;

/** A path whose key `owner` owns, as node `asker` sees the ring. */
async function pathOwnedBy(asker: ClusterNodeProcess, owner: string, prefix: string): Promise<string> {
  return (await pathsOwnedBy(asker, owner, prefix, 1, SITE))[0]!;
}

function originHits(origin: TestOrigin, path: string): number {
  return origin.requests.filter((r) => r.url === path).length;
}

describe('strong mode cluster', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;

  before(async () => {
    const versions = new Map<string, number>();
    origin = await startTestOrigin((request) => {
      const version = (versions.get(request.url ?? '') ?? 0) + 1;
      versions.set(request.url ?? '', version);
      return { headers: { 'cache-control': 'max-age=600' }, body: `${request.url} v${version}` };
    });
    cluster = await startSvcCluster({ names: ['a', 'b', 'c'], mode: 'strong', originUrl: origin.url });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
  });

  test('a key owned by B, asked at A, is served from B and fetched from the origin once', async () => {
    const [a, , c] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess, ClusterNodeProcess];
    const path = await pathOwnedBy(a, 'b', 'owned');
    const first = await get(a, path);
    const second = await get(a, path);
    const fromC = await get(c, path);
    assert.equal(first.body, `${path} v1`);
    assert.equal(header(second, 'x-cache'), 'HIT');
    assert.equal(fromC.body, `${path} v1`);
    assert.equal(originHits(origin, path), 1, 'the owner fetched once for the whole cluster');
    const head = await fetchRaw(`${c.dataUrl}${path}`, { method: 'HEAD', headers: { host: SITE } });
    assert.equal(head.status, 200);
    assert.equal(header(head, 'content-length'), String(Buffer.byteLength(`${path} v1`)), 'a HEAD through a peer keeps the length of the GET body');
    assert.equal(head.body, '');
    const metrics = (await fetchRaw(`${a.adminUrl}/metrics`)).body;
    assert.match(metrics, /^svc_requests_total\{method="GET",status="200",cache_result="HIT",source="peer",route="all"\} [1-9]/m);
    assert.match(metrics, /^svc_peer_fetch_hits_total [1-9]/m);
    assert.match(metrics, /^svc_cluster_mode_info\{mode="strong"\} 1$/m);
    const check = await admin(a, `/v1/debug/cachecheck?url=${encodeURIComponent(`http://${SITE}${path}`)}`);
    assert.equal(check.json.owner, 'b');
    assert.equal(check.json.hit, false, 'non-owners keep no copy');
  });

  test('a purge at C is gone everywhere within 1 s', async () => {
    const [a, b, c] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess, ClusterNodeProcess];
    const path = await pathOwnedBy(a, 'b', 'purged');
    await get(a, path);
    assert.equal(header(await get(c, path), 'x-cache'), 'HIT');
    const started = Date.now();
    const purge = await admin(c, '/v1/purge', { url: `https://${SITE}${path}` });
    assert.equal(purge.status, 200);
    // C is not the owner and keeps no copy: it removed nothing itself (count 0), and names both schemes' keys.
    assert.deepEqual(
      purge.json,
      { status: 'purged', count: 0, keys: [`https://${SITE}${path}`, `http://${SITE}${path}`], peers_confirmed: 2, peers_missed: 0, peers_missed_names: [] },
      'the answer says both peers confirmed',
    );
    for (const node of [a, b, c]) assert.equal((await get(node, path)).body, `${path} v2`, `${node.name} no longer serves v1`);
    assert.ok(Date.now() - started < 1_000, `purge reached every node in ${Date.now() - started} ms`);
    const metrics = (await fetchRaw(`${c.adminUrl}/metrics`)).body;
    assert.match(metrics, /^svc_cluster_invalidations_http_total\{type="purge"\} [1-9]/m);
    assert.match(metrics, /^svc_cluster_invalidations_gossip_total\{type="purge"\} [1-9]/m);
  });

  test('peers are listed by the API with state, mode and ring share', async () => {
    const peers = JSON.parse((await fetchRaw(`${cluster.nodes[0]!.adminUrl}/v1/cluster/peers`)).body) as {
      name: string;
      state: string;
      mode: string;
      ring_share: number;
      mode_drift: boolean;
      admin_address: string;
    }[];
    assert.deepEqual(peers.map((p) => p.name).sort(), ['a', 'b', 'c']);
    assert.ok(peers.every((p) => p.state === 'alive' && p.mode === 'strong' && !p.mode_drift));
    const shares = peers.reduce((sum, p) => sum + p.ring_share, 0);
    assert.ok(Math.abs(shares - 1) < 0.01, `ring shares add up to 1 (${shares})`);
    assert.equal(peers.find((p) => p.name === 'b')!.admin_address, new URL(cluster.node('b').adminUrl).host);
  });

  test('SIGKILL of B: its keys miss cold on A and C while the cluster keeps serving; back after a purge it missed, B does not serve the purged object', async () => {
    const [a, b, c] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess, ClusterNodeProcess];
    const path = await pathOwnedBy(a, 'b', 'killed');
    await get(a, path); // stored on B, its owner
    // The warm tier writes asynchronously: wait until B holds the object on disk, so that after the
    // restart it has something stale to (not) serve.
    await eventually(
      'B storing the object in its warm tier',
      async () => (await admin(b, `/v1/debug/cachecheck?url=${encodeURIComponent(`http://${SITE}${path}`)}`)).json.variants as { tier: string }[],
      (variants) => variants.some((v) => v.tier === 'warm'),
      { everyMs: 100 },
    );
    await cluster.kill('b');
    const fromA = await get(a, path);
    const fromC = await get(c, path);
    assert.equal(fromA.status, 200);
    assert.equal(fromC.status, 200);
    assert.equal(header(fromA, 'x-cache'), 'MISS', 'the owner is gone: the key misses cold');
    assert.ok(originHits(origin, path) >= 2);
    // Purged while B is down: B never hears of it by fan-out or gossip at the time.
    assert.equal((await admin(a, '/v1/purge', { url: `http://${SITE}${path}` })).status, 200);
    const beforeRestart = originHits(origin, path);
    await cluster.restart('b');
    const afterRestart = await get(b, path);
    assert.notEqual(afterRestart.body, `${path} v1`, 'B does not serve what was purged while it was down');
    assert.ok(originHits(origin, path) > beforeRestart);
  });
});
