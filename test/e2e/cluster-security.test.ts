// Issue 16 item 1, with real `svc serve` processes: a cluster is authenticated by default. A forged
// datagram, a forged peer request and a rogue join are each refused and counted (a peer request on any
// `/v1/peer/*` path with 401 and the admin API's JSON error body, issue 28 item 5); a client cannot steer
// a request past its owner with the internal hop header; without a secret a clustered node refuses to
// start unless told in writing to run open, and then it says so. The same forgeries against a cluster
// run open (`cluster.insecure`) succeed, which is what the defaults prevent.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClusterMember, JoinAbortedError, LEASE_CHANNEL, sealTransport } from '../../cluster/index.js';
import { encodeMessage } from '../../cluster/codec/message-codec.js';
import { WIRE_VERSION } from '../../cluster/codec/messages.js';
import { BROADCASTS_CHANNEL, PUSH_PULL_CHANNEL } from '../../cluster/membership/membership.js';
import { channelPath, createUdpTransport } from '../../transports/udp/index.js';
import { encodeBatch } from '../../src/clustering/gossip-batches.js';
import { encodeInvalidation } from '../../src/clustering/invalidation-message.js';
import { INVALIDATION_CHANNELS, PULL_CHANNEL } from '../../src/clustering/invalidation-delivery.js';
import { CATCH_UP_CHANNEL } from '../../src/clustering/catch-up.js';
import { PEER_FETCH_CHANNEL } from '../../src/clustering/peer-fetcher.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, clusterAdmin, pathsOwnedBy, CLUSTER_TOKEN, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { freePort } from '../../bench/support/free-port.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const SITE = 'shop.example';
const REJECTED_REQUESTS = /^svc_cluster_auth_rejected_total\{path="request"\} (\d+)/m;
/** Every channel a strong-mode node serves as `/v1/peer/<channel>`: the spec's and the internal ones (docs/decisions.md). */
const PEER_CHANNELS = [PEER_FETCH_CHANNEL, ...Object.values(INVALIDATION_CHANNELS), PULL_CHANNEL, CATCH_UP_CHANNEL, LEASE_CHANNEL, PUSH_PULL_CHANNEL, BROADCASTS_CHANNEL];

async function get(node: ClusterNodeProcess, path: string, headers: Record<string, string> = {}) {
  return fetchRaw(`${node.dataUrl}${path}`, { headers: { host: SITE, ...headers } });
}

async function admin(node: ClusterNodeProcess, path: string) {
  return (await clusterAdmin(node, path)).json;
}

async function metric(node: ClusterNodeProcess, pattern: RegExp): Promise<number> {
  const match = pattern.exec((await fetchRaw(`${node.adminUrl}/metrics`)).body);
  return match ? Number(match[1]) : 0;
}

/** A path whose key `owner` owns, as `asker` sees the ring. */
async function pathOwnedBy(asker: ClusterNodeProcess, owner: string, prefix: string): Promise<string> {
  return (await pathsOwnedBy(asker, owner, prefix, 1, SITE))[0]!;
}

/** A purge as a member would gossip it, in one datagram, in the clear. */
function forgedPurgeDatagram(path: string, id: string): Buffer {
  const payload = encodeBatch([{ id, at: Date.now(), type: 'purge', url: `http://${SITE}${path}` }]);
  return Buffer.concat([Buffer.from([WIRE_VERSION]), encodeMessage({ kind: 'user', origin: 'rogue', seq: 1, payload })]);
}

async function sendDatagram(address: string, datagram: Buffer): Promise<void> {
  const [host, port] = address.split(':') as [string, string];
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.send(datagram, Number(port), host, () => resolve()));
  socket.close();
}

/** POST /v1/peer/<channel> on a node's cluster port, in the clear. */
function forgedPeerRequest(node: ClusterNodeProcess, channel: string, body: Buffer) {
  return fetchRaw(`http://${node.clusterAddress}${channelPath(channel)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
}

/** A ban of `path` as a member would send it on /v1/peer/purge, in the clear. */
function forgedPeerPurge(node: ClusterNodeProcess, path: string, id: string) {
  return forgedPeerRequest(node, INVALIDATION_CHANNELS.purge, Buffer.from(encodeInvalidation({ id, at: Date.now(), type: 'ban', path_regex: `^${path}` })));
}

/** Caches `path` at its owner (asked through `node`) and checks it is a HIT there. */
async function cached(node: ClusterNodeProcess, path: string): Promise<string> {
  const first = await get(node, path);
  assert.equal(header(await get(node, path), 'x-cache'), 'HIT');
  return first.body;
}

function versionedOrigin(): Promise<TestOrigin> {
  const versions = new Map<string, number>();
  return startTestOrigin((request) => {
    const version = (versions.get(request.url ?? '') ?? 0) + 1;
    versions.set(request.url ?? '', version);
    return { headers: { 'cache-control': 'max-age=600' }, body: `${request.url} v${version}` };
  });
}

describe('a cluster with the default config (a shared secret)', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;

  before(async () => {
    origin = await versionedOrigin();
    cluster = await startSvcCluster({ names: ['a', 'b'], mode: 'strong', originUrl: origin.url });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
  });

  test('a forged datagram purges nothing, and is counted', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    const path = await pathOwnedBy(a, 'a', 'datagram');
    const body = await cached(a, path);
    const rejectedPackets = /^svc_cluster_auth_rejected_total\{path="packet"\} (\d+)/m;
    const before = await metric(a, rejectedPackets);
    await sendDatagram(a.clusterAddress, forgedPurgeDatagram(path, 'forged-datagram'));
    // Counted once read and refused: from then on, whatever it could have done is done.
    await eventually('the datagram refused', () => metric(a, rejectedPackets), (rejected) => rejected > before);
    assert.equal((await get(a, path)).body, body, 'still the cached object');
  });

  test('a forged POST /v1/peer/purge is refused, bans nothing, and is counted', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    const path = await pathOwnedBy(a, 'a', 'request');
    const body = await cached(a, path);
    const before = await metric(a, REJECTED_REQUESTS);
    // Refused (and counted) before anything of it is applied: its 401 is the barrier.
    assert.equal((await forgedPeerPurge(a, path, 'forged-request')).status, 401);
    assert.equal((await get(a, path)).body, body);
    assert.equal(((await admin(a, '/v1/stats')).bans as { active: number }).active, 0);
    assert.equal(await metric(a, REJECTED_REQUESTS), before + 1);
  });

  test('every /v1/peer/* path answers a request without the cluster seal 401 with the JSON error body, and counts it', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    const before = await metric(a, REJECTED_REQUESTS);
    for (const channel of PEER_CHANNELS) {
      const answer = await forgedPeerRequest(a, channel, Buffer.from('{"forged":true}'));
      assert.equal(answer.status, 401, `${channel}: ${answer.body}`);
      assert.match(header(answer, 'content-type') ?? '', /^application\/json/, channel);
      assert.equal(header(answer, 'www-authenticate'), 'Sealed realm="cluster"', channel);
      assert.deepEqual(JSON.parse(answer.body), {
        error: { code: 'cluster_auth_rejected', message: `a request on ${channel} is not sealed with a key of this cluster` },
      });
    }
    assert.equal(await metric(a, REJECTED_REQUESTS), before + PEER_CHANNELS.length, 'each refusal counted once');
  });

  test('a process without the secret, or with another one, cannot join', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    const before = await metric(a, REJECTED_REQUESTS);
    for (const secret of [undefined, Buffer.alloc(32, 0x42)]) {
      const udp = createUdpTransport({ bind: '127.0.0.1:0' });
      const transport = secret === undefined ? udp : sealTransport(udp, { secrets: [secret] });
      const rogue = createClusterMember({ name: 'rogue', transport, metadata: { mode: 'strong' }, config: { joinRetryInitialMs: 200 } });
      await rogue.start();
      try {
        await assert.rejects(rogue.join([a.clusterAddress], { signal: AbortSignal.timeout(1_500) }), JoinAbortedError);
      } finally {
        await rogue.stop();
      }
    }
    const peers = JSON.parse((await fetchRaw(`${a.adminUrl}/v1/cluster/peers`)).body) as { name: string }[];
    assert.deepEqual(peers.map((p) => p.name).sort(), ['a', 'b']);
    assert.ok((await metric(a, REJECTED_REQUESTS)) > before);
    const ready = JSON.parse((await fetchRaw(`${a.adminUrl}/readyz?detail=1`)).body) as { conditions: { name: string; ready: boolean; reason: string }[] };
    const authenticated = ready.conditions.find((c) => c.name === 'cluster_authenticated');
    assert.equal(authenticated?.ready, true);
    assert.match(authenticated?.reason ?? '', /cluster\.secret/);
  });

  test('a client cannot steer a request past its owner with the internal hop header, which never reaches the origin', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    const path = await pathOwnedBy(a, 'b', 'hop');
    const answer = await get(a, path, { 'x-svc-peer-hop': '1' });
    assert.equal(answer.status, 200);
    const check = await admin(a, `/v1/debug/cachecheck?url=${encodeURIComponent(`http://${SITE}${path}`)}`);
    assert.equal(check.hit, false, 'A does not own the key and keeps no copy: the request went to B');
    const atOrigin = origin.requests.filter((r) => r.url === path);
    assert.equal(atOrigin.length, 1);
    assert.equal(atOrigin[0]!.headers['x-svc-peer-hop'], undefined, 'the internal field stays inside the cluster');
  });
});

describe('a cluster run open (cluster.insecure: true)', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;

  before(async () => {
    origin = await versionedOrigin();
    cluster = await startSvcCluster({ names: ['a', 'b'], mode: 'strong', originUrl: origin.url, security: 'insecure' });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
  });

  test('says so: an ERROR at startup and a readiness condition, without leaving rotation', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    assert.match(a.stdout, /"level":"error".*cluster traffic is NOT authenticated/);
    const ready = JSON.parse((await fetchRaw(`${a.adminUrl}/readyz?detail=1`)).body) as { status: string; conditions: { name: string; ready: boolean }[] };
    assert.equal(ready.conditions.find((c) => c.name === 'cluster_authenticated')?.ready, false);
    assert.equal(ready.status, 'ready');
  });

  test('and the forged datagram of the test above does purge the object there', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    const path = await pathOwnedBy(a, 'a', 'open');
    const body = await cached(a, path);
    await sendDatagram(a.clusterAddress, forgedPurgeDatagram(path, 'forged-open'));
    await eventually('the forged purge applied', async () => (await get(a, path)).body, (now) => now !== body);
  });
});

test('a clustered node without a secret refuses to start, naming the key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-insecure-'));
  try {
    const config = join(dir, 'svc.yaml');
    await writeFile(
      config,
      [
        `listen: 127.0.0.1:${await freePort()}`,
        `admin: { listen: "127.0.0.1:${await freePort()}" }`,
        'pools: [{ name: origin, upstreams: ["http://127.0.0.1:1"] }]',
        'routes: [{ name: all, pool: origin }]',
        `cluster: { mode: eventual, bind: "127.0.0.1:${await freePort()}", join: ["127.0.0.1:9"] }`,
      ].join('\n'),
    );
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: CLUSTER_TOKEN } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 1);
    assert.match(stderr, /cluster\.secret: expected a shared secret .* or cluster\.insecure: true/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
