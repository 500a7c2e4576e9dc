// Issue 16 items 2, 3 and 6, with real `svc serve` processes and warm tiers: a node that was down
// while more invalidations happened than the old delivery log held (1,000) comes back serving none of
// what they hid and all of what they did not; it applied each once, as of when it was made, and a
// restart applies none again nor duplicates a ban. Until it has caught up it serves nothing it cached
// before. A refresh reaches a former owner, which serves the refreshed object when the key is its again.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, clusterAdmin, pathsOwnedBy, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { ORIGIN_CLOCK_SKEW_MS } from '../../src/clustering/cluster-invalidator.js';
import { SYNC_INTERVAL_MS } from '../../src/clustering/catch-up.js';
import { CLUSTER_LOG_FILE_NAME } from '../../src/clustering/log-stores.js';
import { jsonOfLine } from '../../src/store/json-lines-journal.js';

const SITE = 'shop.example';
const AWAY_INVALIDATIONS = 1_200;

async function get(node: ClusterNodeProcess, path: string) {
  return fetchRaw(`${node.dataUrl}${path}`, { headers: { host: SITE } });
}

async function admin(node: ClusterNodeProcess, path: string, body?: unknown) {
  const answer = await clusterAdmin(node, path, body);
  assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.json)}`);
  return answer.json;
}

async function metric(node: ClusterNodeProcess, pattern: RegExp): Promise<number | undefined> {
  const match = pattern.exec((await fetchRaw(`${node.adminUrl}/metrics`)).body);
  return match ? Number(match[1]) : undefined;
}

async function condition(node: ClusterNodeProcess, name: string): Promise<{ ready: boolean; reason: string } | undefined> {
  const detail = JSON.parse((await fetchRaw(`${node.adminUrl}/readyz?detail=1`)).body) as { conditions: { name: string; ready: boolean; reason: string }[] };
  return detail.conditions.find((c) => c.name === name);
}

/** The latest `synced` and `complete_since` times a node's cluster log journal holds on disk. */
async function journalTimes(node: ClusterNodeProcess): Promise<{ synced: number; completeSince: number }> {
  const text = await readFile(join(node.warmPath, 'invalidation', CLUSTER_LOG_FILE_NAME), 'utf8').catch(() => '');
  const times = { synced: 0, completeSince: 0 };
  for (const line of text.split('\n')) {
    const record = jsonOfLine(line) as { type?: string; at?: number } | undefined;
    if (record?.type === 'synced') times.synced = Math.max(times.synced, record.at ?? 0);
    if (record?.type === 'complete_since') times.completeSince = Math.max(times.completeSince, record.at ?? 0);
  }
  return times;
}

const WAIT = { timeoutMs: 20_000, everyMs: 100 };

async function inWarmTier(node: ClusterNodeProcess, path: string): Promise<boolean> {
  const check = await admin(node, `/v1/debug/cachecheck?url=${encodeURIComponent(`http://${SITE}${path}`)}`);
  return (check.variants as { tier: string }[]).some((variant) => variant.tier === 'warm');
}

async function peerState(asker: ClusterNodeProcess, name: string): Promise<string | undefined> {
  const peers = JSON.parse((await fetchRaw(`${asker.adminUrl}/v1/cluster/peers`)).body) as { name: string; state: string }[];
  return peers.find((peer) => peer.name === name)?.state;
}

describe('catch-up after an absence (strong mode, warm tiers)', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;

  before(async () => {
    const versions = new Map<string, number>();
    origin = await startTestOrigin((request) => {
      const path = request.url ?? '';
      const version = (versions.get(path) ?? 0) + 1;
      versions.set(path, version);
      return { headers: { 'cache-control': 'max-age=600', 'surrogate-key': `tag${path.replaceAll('/', '-')}` }, body: `${path} v${version}` };
    });
    cluster = await startSvcCluster({ names: ['a', 'b', 'c'], mode: 'strong', originUrl: origin.url });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
  });

  test(`a node down during ${AWAY_INVALIDATIONS} invalidations serves none of what they hid, and all it still may`, async (t) => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    const [purged, banned, refreshed, kept] = (await pathsOwnedBy(a, 'b', 'away', 4)) as [string, string, string, string];
    for (const path of [purged, banned, refreshed, kept]) await get(a, path);
    for (const path of [purged, banned, refreshed, kept]) await eventually(`${path} in B's warm tier`, () => inWarmTier(b, path), (held) => held, WAIT);
    // B's sync heartbeat (every SYNC_INTERVAL_MS) must have marked it synced after every peer's log
    // began (a peer that caught up after B vouches only from then): otherwise the absence is a gap,
    // and B rightly distrusts all it cached. On a loaded machine the nodes catch up far apart.
    await eventually(
      "B's journal synced after every peer's log began",
      () => Promise.all([a, b, cluster.node('c')].map(journalTimes)),
      ([atA, atB, atC]) => atB!.synced >= Math.max(atA!.completeSince, atC!.completeSince) && atA!.completeSince > 0 && atC!.completeSince > 0,
      { timeoutMs: SYNC_INTERVAL_MS + 20_000, everyMs: 100 },
    );
    await cluster.kill('b');
    await eventually('A declares B dead', () => peerState(a, 'b'), (state) => state === 'dead', { ...WAIT, timeoutMs: 30_000 });

    await admin(a, '/v1/purge', { url: `http://${SITE}${purged}` });
    const banAskedMs = Date.now();
    const banAnswer = await admin(a, '/v1/ban', { surrogate_key: `tag${banned.replaceAll('/', '-')}` });
    const banAnsweredMs = Date.now();
    assert.equal(banAnswer.status, 'banned');
    await admin(a, '/v1/refresh', { url: `http://${SITE}${refreshed}` });
    const keyInvalidationsDoneMs = Date.now();
    // Then more than the 1,000 invalidations the old delivery log held, for other URLs.
    const urls = Array.from({ length: AWAY_INVALIDATIONS - 3 }, (_, i) => `http://${SITE}/other-${i}`);
    for (let i = 0; i < urls.length; i += 20) await Promise.all(urls.slice(i, i + 20).map((url) => admin(a, '/v1/purge', { url })));
    // The behaviour under test: time past the clock-skew margin, so "as of when it was made" and "as of
    // the restart" differ.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, keyInvalidationsDoneMs + ORIGIN_CLOCK_SKEW_MS + 500 - Date.now())));

    const started = Date.now();
    await cluster.restart('b');
    t.diagnostic(`B ready (caught up) ${Date.now() - started} ms after its restart began`);
    const caughtUp = await condition(b, 'cluster_caught_up');
    assert.equal(caughtUp?.ready, true);
    assert.match(caughtUp?.reason ?? '', /^caught up from [ac]: \d+ invalidations applied$/);
    assert.equal(await metric(b, /^svc_cluster_catching_up (\d+)/m), 0);

    for (const path of [purged, banned, refreshed]) assert.equal((await get(b, path)).body, `${path} v2`, `B does not serve the ${path} it cached before`);
    const stillCached = await get(b, kept);
    assert.equal(stillCached.body, `${kept} v1`);
    assert.equal(header(stillCached, 'x-cache'), 'HIT', 'what no invalidation hid is still served from the warm tier');

    // The ban is B's as of when it was made at A (within the clock-skew margin), never as new, and once.
    const check = await admin(b, `/v1/debug/cachecheck?url=${encodeURIComponent(`http://${SITE}${banned}`)}`);
    const [banAtB] = (check.matching_bans as { created_at: string }[]).map((ban) => Date.parse(ban.created_at));
    assert.ok(banAtB !== undefined && banAtB >= banAskedMs && banAtB <= banAnsweredMs + ORIGIN_CLOCK_SKEW_MS, 'as of when it was made');
    assert.ok(banAtB < started, 'not as of the restart');
    assert.equal(((await admin(b, '/v1/stats')).bans as { active: number }).active, 1);

    // Told it all again after another restart, B applies none of it twice.
    await cluster.kill('b');
    await cluster.restart('b');
    assert.equal(((await admin(b, '/v1/stats')).bans as { active: number }).active, 1, 'the journal holds the ban once');
    assert.equal(await metric(b, /^svc_cluster_invalidations_applied_total\{type="purge",path="catchup"\} (\d+)/m), undefined, 'nothing applied again');
  });

  test('a refresh reaches a former owner of the key, whose copy it marks stale', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    const [path] = (await pathsOwnedBy(a, 'c', 'former', 1)) as [string];
    await cluster.kill('c');
    await eventually('A declares C dead', () => peerState(a, 'c'), (state) => state === 'dead', { ...WAIT, timeoutMs: 30_000 });
    const stats = await admin(a, `/v1/stats?url=${encodeURIComponent(`http://${SITE}${path}`)}`);
    const interim = (stats.ring as { owner: string }).owner;
    await get(a, path); // cached at the interim owner
    assert.equal(header(await get(a, path), 'x-cache'), 'HIT');
    await cluster.restart('c');
    await eventually('C back', () => peerState(a, 'c'), (state) => state === 'alive', WAIT);
    const refreshed = await admin(a, '/v1/refresh', { url: `http://${SITE}${path}` });
    assert.equal(refreshed.peers_confirmed, 2);
    // The interim owner's copy is stale now: should the key be its again (C gone again), it revalidates.
    const formerOwner = cluster.node(interim);
    const check = await admin(formerOwner, `/v1/debug/cachecheck?url=${encodeURIComponent(`http://${SITE}${path}`)}`);
    const variants = check.variants as { forced_stale: boolean }[];
    assert.ok(variants.length > 0 && variants.every((variant) => variant.forced_stale), `the former owner ${interim} holds only a stale copy`);
  });

  test('until it has caught up, a restarted node serves nothing it cached before', async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    const [path] = (await pathsOwnedBy(a, 'b', 'gate', 1)) as [string];
    await get(a, path);
    await eventually("the object in B's warm tier", () => inWarmTier(b, path), (held) => held, WAIT);
    const before = origin.requests.filter((r) => r.url === path).length;
    for (const name of ['a', 'b', 'c']) await cluster.kill(name);
    // B comes back alone: its seed (A) is down, so it cannot learn what it may have missed.
    await cluster.relaunch('b');
    await eventually('B starts its cluster side', () => condition(b, 'cluster_caught_up'), (caughtUp) => caughtUp !== undefined, WAIT);
    assert.equal((await condition(b, 'cluster_caught_up'))?.ready, false);
    assert.equal(await metric(b, /^svc_cluster_catching_up (\d+)/m), 1);
    assert.equal((await fetchRaw(`${b.adminUrl}/readyz`)).status, 503);
    const served = await get(b, path);
    assert.equal(served.status, 200);
    assert.equal(header(served, 'x-cache'), 'MISS', 'not the copy from before the restart');
    assert.equal(origin.requests.filter((r) => r.url === path).length, before + 1);
    await cluster.restart('a');
    await eventually('B caught up once A is back', () => condition(b, 'cluster_caught_up'), (caughtUp) => caughtUp?.ready === true, { ...WAIT, timeoutMs: 30_000 });
    await cluster.restart('c');
  });
});
