// svc over the libp2p transport (`cluster.transport: libp2p`), as an operator runs it: real `svc serve`
// processes on 127.0.0.1. Each node's key lives in its `cluster.libp2p.data_dir`, made before the start
// so that the allowlists (`cluster.libp2p.allowed_peer_ids`) can name the peer ids: a node that used
// another key would be refused by its peers and the cluster would not form. A node whose peer id no
// allowlist names has the cluster's secret and joins the same seeds, and still never becomes a member.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadOrCreateNodeKey } from '../../transports/libp2p/index.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { clusterAdmin, startSvcCluster, type ClusterNodeProcess, type SvcCluster } from '../support/svc-cluster.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';

const SITE = { host: 'shop.example' };
/**
 * How long the refused node is watched: several protocol periods, and far longer than a join takes. A
 * negative check kept on the clock: the allowlist refuses c's connections silently (uncounted), and c
 * logs only its first unanswered join round, so no event marks "c tried again and was refused".
 */
const REFUSED_WATCH_MS = 6_000;

describe('a cluster over libp2p', { timeout: 120_000 }, () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;
  let keys: string;

  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `${request.url}` }));
    keys = await mkdtemp(join(tmpdir(), 'svc-libp2p-keys-'));
    const allowed = await Promise.all(['a', 'b'].map(async (name) => (await loadOrCreateNodeKey(join(keys, name))).peerId));
    cluster = await startSvcCluster({
      names: ['a', 'b'],
      mode: 'eventual',
      originUrl: origin.url,
      // Every node allows a and b, and only them: the node c added later is allowed by nobody.
      clusterKeysOf: (name) =>
        `transport: libp2p, libp2p: { data_dir: ${JSON.stringify(join(keys, name))}, allowed_peer_ids: [${allowed.map((id) => `"${id}"`).join(', ')}] }`,
    });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
    if (keys !== undefined) await rm(keys, { recursive: true, force: true });
  });

  async function memberNames(node: ClusterNodeProcess): Promise<string[]> {
    const peers = JSON.parse((await fetchRaw(`${node.adminUrl}/v1/cluster/peers`)).body) as { name: string; state: string }[];
    return peers.filter((peer) => peer.state === 'alive').map((peer) => peer.name).sort();
  }

  test('two nodes over libp2p form one cluster, and a purge at one reaches the other', async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    for (const node of [a, b]) assert.deepEqual(await memberNames(node), ['a', 'b']);
    await fetchRaw(`${b.dataUrl}/page`, { headers: SITE });
    assert.equal(header(await fetchRaw(`${b.dataUrl}/page`, { headers: SITE }), 'x-cache'), 'HIT');
    const purge = await clusterAdmin(a, '/v1/purge', { url: 'http://shop.example/page' });
    assert.equal(purge.status, 200);
    await eventually('the purge made at a reaching b over libp2p', async () => header(await fetchRaw(`${b.dataUrl}/page`, { headers: SITE }), 'x-cache'), (xCache) => xCache === 'MISS', {
      everyMs: 100,
    });
  });

  test('a node whose peer id is not allowed never becomes a member', async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    const c = await cluster.add('c', 'eventual');
    const deadline = Date.now() + REFUSED_WATCH_MS;
    while (Date.now() < deadline) {
      for (const node of [a, b]) assert.deepEqual(await memberNames(node), ['a', 'b'], `${node.name} lists only the allowed peers`);
      await sleep(250);
    }
    assert.equal(c.child?.exitCode, null, 'c kept running and trying');
    assert.ok(!(await memberNames(c)).includes('a'), 'c never had a as a member either');
  });
});
