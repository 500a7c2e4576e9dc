// Issue 7, eventual mode and mode drift, with real `svc serve` processes on 127.0.0.1.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, CLUSTER_TOKEN, MEMBERSHIP_WAIT_MS, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { MAX_BAN_REGEX_BYTES } from '../../src/invalidation/ban.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const SITE = { host: 'shop.example' };

function originHits(origin: TestOrigin, path: string): number {
  return origin.requests.filter((r) => r.url === path).length;
}

async function runCli(args: string[]): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stdout };
}

describe('eventual mode cluster', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;

  before(async () => {
    let version = 0;
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `${request.url} v${++version}` }));
    cluster = await startSvcCluster({ names: ['a', 'b', 'c'], mode: 'eventual', originUrl: origin.url });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
  });

  test('no peer fetch: each node fills from the origin on its own', async () => {
    for (const node of cluster.nodes) {
      assert.equal(header(await fetchRaw(`${node.dataUrl}/own`, { headers: SITE }), 'x-cache'), 'MISS');
      assert.equal(header(await fetchRaw(`${node.dataUrl}/own`, { headers: SITE }), 'x-cache'), 'HIT');
    }
    assert.equal(originHits(origin, '/own'), 3);
    const metrics = (await fetchRaw(`${cluster.nodes[0]!.adminUrl}/metrics`)).body;
    assert.match(metrics, /^svc_peer_fetch_hits_total 0$/m);
    assert.match(metrics, /^svc_cluster_mode_info\{mode="eventual"\} 1$/m);
  });

  test('a purge reaches every node by gossip within 5 s', async () => {
    const [a, b, c] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess, ClusterNodeProcess];
    for (const node of [a, b, c]) await fetchRaw(`${node.dataUrl}/gossiped`, { headers: SITE });
    const started = Date.now();
    const purge = await fetchRaw(`${a.adminUrl}/v1/purge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://shop.example/gossiped' }),
    });
    assert.equal(purge.status, 200);
    for (const node of [b, c]) {
      await eventually(
        `${node.name} dropping the purged object within 5 s`,
        async () => {
          const check = await fetchRaw(`${node.adminUrl}/v1/debug/cachecheck?url=${encodeURIComponent('http://shop.example/gossiped')}`, {
            headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
          });
          return (JSON.parse(check.body) as { hit: boolean }).hit;
        },
        (hit) => hit === false,
        { timeoutMs: started + 5_000 - Date.now(), everyMs: 50 },
      );
    }
    const metrics = (await fetchRaw(`${a.adminUrl}/metrics`)).body;
    assert.match(metrics, /^svc_cluster_invalidations_gossip_total\{type="purge"\} [1-9]/m);
    assert.doesNotMatch(metrics, /^svc_cluster_invalidations_http_total\{type="purge"\} [1-9]/m);
  });

  test('invalidations of any size the API accepts are answered 200 and reach every node', async () => {
    const [a, b, c] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess, ClusterNodeProcess];
    const post = (path: string, body: unknown) =>
      fetchRaw(`${a.adminUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const cachedPaths = ['/batch-7', '/batch-500', '/batch-999'];
    for (const node of [b, c]) for (const path of cachedPaths) await fetchRaw(`${node.dataUrl}${path}`, { headers: SITE });
    // A full batch (the issue saw 500 from about 40 URLs), a URL near the 1 MiB body limit, and a regex
    // of the longest length a ban accepts (issue 14: longer ones are refused before anything spreads).
    const batch = await post('/v1/purge/batch', { urls: Array.from({ length: 1_000 }, (_, i) => `http://shop.example/batch-${i}`) });
    assert.equal(batch.status, 200, batch.body);
    const longUrl = await post('/v1/purge', { url: `http://shop.example/${'u'.repeat(900_000)}` });
    assert.equal(longUrl.status, 200, longUrl.body.slice(0, 200));
    const longRegex = await post('/v1/ban', { path_regex: `^/${'r'.repeat(MAX_BAN_REGEX_BYTES - 2)}` });
    assert.equal(longRegex.status, 200, longRegex.body.slice(0, 200));
    const tooLong = await post('/v1/ban', { path_regex: `^/${'r'.repeat(MAX_BAN_REGEX_BYTES)}` });
    assert.equal(tooLong.status, 400, tooLong.body.slice(0, 200));
    const started = Date.now();
    for (const node of [b, c]) {
      const applied = async (): Promise<{ stillHeld: string[]; bans: number }> => {
        const stillHeld: string[] = [];
        for (const path of cachedPaths) {
          const check = await fetchRaw(`${node.adminUrl}/v1/debug/cachecheck?url=${encodeURIComponent(`http://shop.example${path}`)}`, {
            headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
          });
          if ((JSON.parse(check.body) as { hit: boolean }).hit) stillHeld.push(path);
        }
        const stats = await fetchRaw(`${node.adminUrl}/v1/stats`, { headers: { authorization: `Bearer ${CLUSTER_TOKEN}` } });
        return { stillHeld, bans: (JSON.parse(stats.body) as { invalidations: { ban: number } }).invalidations.ban };
      };
      await eventually(`${node.name} applying the batch and the large ban within 5 s`, applied, ({ stillHeld, bans }) => stillHeld.length === 0 && bans >= 1, {
        timeoutMs: started + 5_000 - Date.now(),
        everyMs: 50,
      });
    }
    const stats = await fetchRaw(`${b.adminUrl}/v1/stats`, { headers: { authorization: `Bearer ${CLUSTER_TOKEN}` } });
    assert.ok((JSON.parse(stats.body) as { invalidations: { purge: number } }).invalidations.purge >= 1, 'the long URL arrived too');
  });

  test('the CLI lists the peers as a table and as JSON', async () => {
    const server = new URL(cluster.nodes[0]!.adminUrl).host;
    const table = await runCli(['cluster', 'peers', '--server', server]);
    assert.equal(table.code, 0);
    assert.match(table.stdout, /^NAME\s+STATE\s+CLUSTER ADDRESS/m);
    for (const name of ['a', 'b', 'c']) assert.match(table.stdout, new RegExp(`^${name}\\s+alive\\s+127\\.0\\.0\\.1:\\d+`, 'm'));
    const json = await runCli(['cluster', 'peers', '--server', server, '--output', 'json']);
    assert.equal(json.code, 0);
    assert.deepEqual((JSON.parse(json.stdout) as { name: string }[]).map((p) => p.name).sort(), ['a', 'b', 'c']);
  });

  test('a member running another mode is a drift: logged, readiness condition false, flagged in peers', async () => {
    const d = await cluster.add('d', 'strong');
    const a = cluster.nodes[0]!;
    const condition = await eventually(
      'the drift seen at a',
      async () => {
        const detail = JSON.parse((await fetchRaw(`${a.adminUrl}/readyz?detail=1`)).body) as { conditions: { name: string; ready: boolean; reason: string }[] };
        return detail.conditions.find((c) => c.name === 'cluster_mode_consistent');
      },
      (found) => found?.ready === false,
      // The newcomer joining, as the cluster's own convergence is waited on.
      { everyMs: 100, timeoutMs: MEMBERSHIP_WAIT_MS, detail: () => `a said:\n${a.stdout.slice(-3000)}\nd said:\n${d.stdout.slice(-3000)}` },
    );
    assert.match(condition!.reason, /\bd\b/);
    assert.equal((await fetchRaw(`${a.adminUrl}/readyz`)).status, 200, 'advisory: a drift takes no node out of rotation');
    const peers = JSON.parse((await fetchRaw(`${a.adminUrl}/v1/cluster/peers`)).body) as { name: string; mode: string; mode_drift: boolean }[];
    assert.deepEqual(peers.find((p) => p.name === 'd'), { ...peers.find((p) => p.name === 'd'), mode: 'strong', mode_drift: true });
    // The strong newcomer places no key on the eventual members: its ring is itself alone.
    const seenByD = JSON.parse((await fetchRaw(`${d.adminUrl}/v1/cluster/peers`)).body) as { name: string; ring_share: number }[];
    assert.deepEqual(Object.fromEntries(seenByD.map((p) => [p.name, p.ring_share])), { a: 0, b: 0, c: 0, d: 1 });
    // Each process logs the drift to its stdout, which reaches this process a moment later.
    await eventually('a logging the drift', () => a.stdout, (output) => /cluster mode drift: member d does not run eventual/.test(output));
    await eventually('the newcomer logging the drift too', () => d.stdout, (output) => /cluster mode drift: member a does not run strong/.test(output));
  });
});
