// Issue 30 item 9, against a real three-node cluster of `svc serve` processes with the default shared
// secret: `/v1/peer/metrics` (spec §4.1) answers a member's traffic and tiers to whoever holds the
// secret and 401 to anyone else; the admin listener's dashboard call reads every member through it and
// lists a member that stops answering as unavailable, within the peer timeout. A body a peer endpoint's
// handler cannot read answers 400 with the JSON error shape, never 500, on every channel the node
// serves under /v1/peer/, and the node serves on.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { LEASE_CHANNEL, sealTransport, TransportError, type Transport } from '../../cluster/index.js';
import { WIRE_VERSION } from '../../cluster/codec/messages.js';
import { BROADCASTS_CHANNEL, PUSH_PULL_CHANNEL } from '../../cluster/membership/membership.js';
import { channelPath, createUdpTransport } from '../../transports/udp/index.js';
import { INVALIDATION_WIRE_VERSION } from '../../src/clustering/invalidation-message.js';
import { INVALIDATION_CHANNELS, PULL_CHANNEL } from '../../src/clustering/invalidation-delivery.js';
import { CATCH_UP_CHANNEL } from '../../src/clustering/catch-up.js';
import { PEER_FETCH_CHANNEL } from '../../src/clustering/peer-fetcher.js';
import { PEER_FETCH_WIRE_VERSION } from '../../src/clustering/peer-fetch-wire.js';
import { decodePeerMetrics, PEER_METRICS_CHANNEL } from '../../src/clustering/peer-metrics-wire.js';
import type { ClusterViewAnswer } from '../../src/admin/dashboard/dashboard-routes.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, clusterAdmin, pathsOwnedBy, CLUSTER_SECRET, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import { fetchRaw, header } from '../support/http.js';
import { sendRaw } from '../support/raw-http.js';
import { eventually } from '../support/eventually.js';
import { parseExposition, valueOf } from '../support/svc-metrics.js';

const SITE = 'shop.example';
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const versioned = (version: number, text: string): Buffer => Buffer.concat([Buffer.from([version]), Buffer.from(text)]);

/**
 * Bodies each channel's handler cannot read, sealed with the right secret so that the handler (not the
 * seal) is what refuses them: not the format, fields of the wrong type, another version.
 */
const MALFORMED: Readonly<Record<string, readonly Buffer[]>> = {
  [PEER_FETCH_CHANNEL]: [Buffer.from('{not json'), json([1, 2]), json({ v: PEER_FETCH_WIRE_VERSION, method: 'GET', path: 42, headers: [], hops: 1 }), json({ v: 99 })],
  ...Object.fromEntries(
    Object.values(INVALIDATION_CHANNELS).map((channel) => [
      channel,
      [Buffer.from('{"type":"purge"}'), versioned(INVALIDATION_WIRE_VERSION, '{not json'), versioned(INVALIDATION_WIRE_VERSION, '{"id":"x","at":1,"type":"purge","url":42}'), versioned(99, '{}')],
    ]),
  ),
  [PULL_CHANNEL]: [Buffer.from('{not json'), json({ s: 5, pull: 'all' }), json([])],
  [CATCH_UP_CHANNEL]: [Buffer.from('{not json'), json({ buckets: 'all' }), json('buckets')],
  [PUSH_PULL_CHANNEL]: [Buffer.alloc(0), Buffer.from([WIRE_VERSION, 0xff, 0xff]), Buffer.from([99, 1, 2, 3]), Buffer.from('{"json":"is not the format"}')],
  [BROADCASTS_CHANNEL]: [Buffer.alloc(0), Buffer.from([WIRE_VERSION, 0xff]), Buffer.from([99])],
  [PEER_METRICS_CHANNEL]: [json({}), Buffer.from('x')],
};

/** A client holding the cluster secret, as a member would: every request is sealed with it. */
async function sealedClient(): Promise<Transport> {
  const transport = sealTransport(createUdpTransport({ bind: '127.0.0.1:0' }), { secrets: [Buffer.from(CLUSTER_SECRET, 'base64')] });
  await transport.start();
  return transport;
}

/** The status and JSON body a refused request was answered with, read from the transport's error. */
async function refusal(request: Promise<Uint8Array>): Promise<{ status: number; body: { error?: { code?: unknown; message?: unknown } } }> {
  const error = await request.then(
    () => assert.fail('the request was answered 200'),
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof TransportError && error.code === 'remote', String(error));
  const answer = /answered (\d+) on \S+: (.*)$/s.exec(error.message);
  assert.ok(answer, error.message);
  return { status: Number(answer[1]), body: JSON.parse(answer[2]!) as { error?: { code?: unknown; message?: unknown } } };
}

describe('peer endpoints of a real cluster', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;
  let client: Transport;
  let a: ClusterNodeProcess;
  /** A path whose key a owns (strong mode), so its hits are a's own. */
  let page: string;

  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=600' }, body: 'x'.repeat(1000) }));
    cluster = await startSvcCluster({ names: ['a', 'b', 'c'], mode: 'strong', originUrl: origin.url, clusterKeys: 'peer_timeout: 500ms' });
    a = cluster.node('a');
    client = await sealedClient();
    [page] = (await pathsOwnedBy(a, 'a', 'page')) as [string];
    // Traffic on a: one miss, then hits.
    for (let i = 0; i < 4; i++) await fetchRaw(`${a.dataUrl}${page}`, { headers: { host: SITE } });
  });

  after(async () => {
    await client?.stop();
    await cluster?.close();
    await origin?.close();
  });

  test("/v1/peer/metrics answers a member's totals and tiers, the same as its /metrics", async () => {
    const report = decodePeerMetrics(await client.request(a.clusterAddress, PEER_METRICS_CHANNEL, new Uint8Array(0), { timeoutMs: 2_000 }));
    const families = parseExposition((await fetchRaw(`${a.adminUrl}/metrics`)).body);
    const requests = families.get('svc_requests_total')!.samples;
    const byResult = (result: string): number => requests.filter((s) => s.labels.cache_result === result).reduce((total, s) => total + s.value, 0);
    assert.equal(report.node, 'a');
    assert.equal(report.requests.by_cache_result.HIT, byResult('HIT'));
    assert.equal(report.requests.by_cache_result.MISS, byResult('MISS'));
    assert.ok(report.requests.by_cache_result.HIT >= 3 && report.requests.by_cache_result.MISS >= 1, JSON.stringify(report.requests));
    assert.equal(report.tiers.hot.entries, valueOf(families, 'svc_hot_store_entries', 'svc_hot_store_entries'));
    assert.equal(report.tiers.hot.bytes, valueOf(families, 'svc_hot_store_bytes', 'svc_hot_store_bytes'));
    assert.ok(report.tiers.warm !== null && report.tiers.warm.max_bytes === 50_000_000);
    assert.ok(report.uptime_s > 0);
  });

  test('without the secret, /v1/peer/metrics is refused (401) and tells nothing', async () => {
    const answer = await fetchRaw(`http://${a.clusterAddress}${channelPath(PEER_METRICS_CHANNEL)}`, { method: 'POST', body: '' });
    assert.equal(answer.status, 401);
    assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'cluster_auth_rejected');
    assert.doesNotMatch(answer.body, /HIT|tiers/);
  });

  test('the dashboard call of a lists every member with its report', async () => {
    const { status, json: answer } = await clusterAdmin(a, '/dashboard/api/cluster');
    assert.equal(status, 200);
    const { clustered, members } = answer as unknown as ClusterViewAnswer;
    assert.equal(clustered, true);
    assert.deepEqual(members.map((m) => [m.name, m.self, m.state, m.unavailable]), [['a', true, 'alive', null], ['b', false, 'alive', null], ['c', false, 'alive', null]]);
    for (const member of members) assert.equal(member.metrics?.node, member.name);
    assert.ok(members[0]!.metrics!.requests.total >= 4);
  });

  test('a malformed body is answered 400 with the JSON error shape on every peer channel', async () => {
    for (const [channel, bodies] of Object.entries(MALFORMED)) {
      for (const body of bodies) {
        const { status, body: answer } = await refusal(client.request(a.clusterAddress, channel, body, { timeoutMs: 2_000 }));
        const what = `${channel} with ${JSON.stringify(body.toString('latin1'))}`;
        assert.equal(status, 400, what);
        assert.equal(answer.error?.code, 'malformed_request', what);
        assert.equal(typeof answer.error?.message, 'string', what);
      }
    }
    // The lease channel's body is the asker's name: any bytes are one, and a name not in the view is ignored.
    assert.equal((await client.request(a.clusterAddress, LEASE_CHANNEL, Buffer.from([0xff, 0xfe]), { timeoutMs: 2_000 })).byteLength, 0);
  });

  test('a body past the limit is refused (413) before it is read, and the node serves on', async () => {
    const { status, body } = await sendRaw(
      `http://${a.clusterAddress}`,
      `POST ${channelPath(INVALIDATION_CHANNELS.purge)} HTTP/1.1\r\nHost: ${a.clusterAddress}\r\nContent-Length: ${17 * 1024 * 1024}\r\n\r\nxx`,
      { untilResponse: true },
    );
    assert.equal(status, 413);
    assert.equal((JSON.parse(body) as { error: { code: string } }).error.code, 'payload_too_large');
    // Still a member that serves: its data plane, its admin API, its peers' requests, its purges.
    assert.equal(header(await fetchRaw(`${a.dataUrl}${page}`, { headers: { host: SITE } }), 'x-cache'), 'HIT');
    assert.equal((await fetchRaw(`${a.adminUrl}/readyz`)).status, 200);
    assert.equal(decodePeerMetrics(await client.request(a.clusterAddress, PEER_METRICS_CHANNEL, new Uint8Array(0), { timeoutMs: 2_000 })).node, 'a');
    assert.equal((await clusterAdmin(cluster.node('b'), '/v1/purge', { url: `http://${SITE}${page}` })).status, 200);
    await eventually('the purge made on b to reach a', async () => header(await fetchRaw(`${a.dataUrl}${page}`, { headers: { host: SITE } }), 'x-cache'), (x) => x === 'MISS');
  });

  test('a member that stops answering is listed as unavailable, within the peer timeout', async () => {
    await cluster.kill('c');
    const started = Date.now();
    const { status, json: answer } = await clusterAdmin(a, '/dashboard/api/cluster');
    assert.equal(status, 200);
    assert.ok(Date.now() - started < 2_000, `answered in ${Date.now() - started} ms`);
    const c = (answer as unknown as ClusterViewAnswer).members.find((m) => m.name === 'c');
    assert.ok(c && c.metrics === null && typeof c.unavailable === 'string', JSON.stringify(c));
    const b = (answer as unknown as ClusterViewAnswer).members.find((m) => m.name === 'b');
    assert.equal(b?.metrics?.node, 'b');
  });
});
