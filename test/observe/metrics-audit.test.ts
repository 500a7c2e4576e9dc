// Issue 19 item 3: every metric of spec §6.5, exported with exactly its type and labels, in the
// situations the spec describes. A real node with a real origin, a warm tier, a CDN block (the fake
// CDN) and a refresh route covers traffic, storage, startup, CDN and refresh; real clusters of two
// `svc serve` processes, one per mode, cover the cluster table. Each situation also moves its metric,
// except the few whose situation another test builds (named where they are skipped here).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestOrigin, type OriginReply, type TestOrigin } from '../support/test-origin.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { startFakeCdn, type FakeCdn } from '../cdn/support/fake-cdn.js';
import { startCdnNode, type CdnNode } from '../cdn/support/cdn-node.js';
import { startSvcCluster, CLUSTER_TOKEN, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import {
  parseExposition,
  RUNTIME_METRIC_PREFIXES,
  SPEC_METRICS,
  SVC_EXTRA_METRICS,
  valueOf,
  type ExportedMetric,
  type Family,
} from '../support/svc-metrics.js';

const SITE = 'shop.example';

/** The family is exported with the spec's type, and every sample carries exactly the spec's labels. */
function assertShape(families: Map<string, Family>, metric: ExportedMetric, minSamples = 1): void {
  const family = families.get(metric.name);
  assert.ok(family, `${metric.name} is exported`);
  assert.equal(family.type, metric.type, `${metric.name} is a ${metric.type}`);
  assert.ok(family.samples.length >= minSamples, `${metric.name} has a sample`);
  for (const sample of family.samples) {
    const names = Object.keys(sample.labels).filter((name) => !(metric.type === 'histogram' && name === 'le'));
    assert.deepEqual(names.sort(), [...metric.labels].sort(), `${sample.name} labels`);
  }
}

const spec = (name: string): ExportedMetric => {
  const found = SPEC_METRICS.find((metric) => metric.name === name);
  assert.ok(found, `${name} is in spec §6.5`);
  return found;
};

/** One request sent as raw bytes; resolves with what the server answered. */
function rawRequest(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('spec §6.5 on a single node: traffic, storage, startup, CDN, refresh', () => {
  let origin: TestOrigin;
  let cdn: FakeCdn;
  let node: CdnNode;
  let dir: string;
  let families: Map<string, Family>;
  const big = 'b'.repeat(90_000);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-metrics-audit-'));
    origin = await startTestOrigin((request): OriginReply => {
      const path = request.url ?? '';
      if (path.startsWith('/main/swr')) return { headers: { 'cache-control': 'max-age=1, stale-while-revalidate=600' }, body: 'swr' };
      if (path.startsWith('/main/reval')) {
        if (request.headers['if-none-match'] === '"v1"') return { status: 304, headers: { etag: '"v1"', 'cache-control': 'max-age=1' } };
        return { headers: { etag: '"v1"', 'cache-control': 'max-age=1' }, body: 'reval' };
      }
      if (path.startsWith('/main/nostore')) return { headers: { 'cache-control': 'no-store' }, body: 'private' };
      if (path.startsWith('/main/big')) return { headers: { 'cache-control': 'max-age=600' }, body: big };
      if (path.startsWith('/main/vary')) return { headers: { 'cache-control': 'max-age=600', vary: 'x-v' }, body: 'v' };
      return { headers: { 'cache-control': 'max-age=600' }, body: 'fresh' };
    });
    cdn = await startFakeCdn();
    node = await startCdnNode(cdn, {
      origins: [origin.url],
      warmDir: join(dir, 'warm'),
      config: {
        hot_max_bytes: 200_000,
        routes: [
          { name: 'main', match: { path_prefix: '/main/' }, pool: 'origin', refresh_before_expiry: true },
          { name: '', match: { host: 'other.example', path_prefix: '/other/' }, pool: 'origin' },
        ],
      },
    });
    const data = node.svc.dataUrl;
    const get = (path: string, headers: Record<string, string> = {}) => fetchRaw(`${data}${path}`, { headers });
    const cacheOf = async (path: string, headers: Record<string, string> = {}) => header(await get(path, headers), 'x-cache');

    assert.equal(await cacheOf('/main/fresh'), 'MISS');
    assert.equal(await cacheOf('/main/fresh'), 'HIT');
    assert.equal(await cacheOf('/main/swr'), 'MISS');
    assert.equal(await cacheOf('/main/reval'), 'MISS');
    node.svc.clock.advance(2_000);
    assert.equal(await cacheOf('/main/swr'), 'STALE');
    assert.equal(await cacheOf('/main/reval'), 'REVALIDATED');
    assert.equal(await cacheOf('/main/nostore'), 'BYPASS');
    assert.equal((await fetchRaw(`${data}/other/page`, { headers: { host: 'other.example' } })).status, 200);
    assert.equal((await get('/nowhere')).status, 404);
    // Three 90 kB bodies in a 200 kB hot tier: the first is evicted, and found again in the warm tier.
    for (const n of [0, 1, 2]) await get(`/main/big-${n}`);
    await eventually('warm writes', async () => valueOf(parseExposition(await node.metrics()), 'svc_warm_store_entries', 'svc_warm_store_entries'), (entries) => entries >= 6);
    const fromWarm = await get('/main/big-0');
    assert.equal(header(fromWarm, 'x-cache'), 'HIT');
    for (let v = 0; v < 65; v++) await get('/main/vary', { 'x-v': `variant-${v}` });
    const smuggled = await rawRequest(data, 'POST /main/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    assert.match(smuggled, /^HTTP\/1\.1 400 /);
    assert.equal((await node.admin('POST', '/v1/purge', { url: `https://${SITE}/main/fresh` })).status, 200);
    assert.equal((await node.admin('POST', '/v1/ban', { path_regex: '/main/[0-9]+' })).status, 200);
    await eventually('the CDN purge', async () => ({ pending: (await node.status()).pending, calls: cdn.calls.length }), ({ pending, calls }) => pending === 0 && calls === 1);
    families = parseExposition(await node.metrics());
  });
  after(async () => {
    await node?.stop();
    await cdn?.close();
    await origin?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('every metric of the traffic, storage, startup, CDN and refresh tables has its type and exact labels', () => {
    // A refresh error type has no series before its first error: test/refresh/background-refresher.test.ts
    // counts each one ("svc_refresh_errors_total", with route and error_type).
    // Nor has an edge counter before its first refusal (test/edge/, test/admin/auth-rate-limit.test.ts,
    // test/node/last-resort.test.ts count each one). Nor has the certificates' expiry without a TLS
    // listener (test/tls/tls-listeners.test.ts reads it).
    const noSampleYet = new Set([
      'svc_refresh_errors_total',
      'svc_http_requests_rejected_total',
      'svc_admin_auth_failures_total',
      'svc_uncaught_errors_total',
      'svc_tls_certificate_expiry_seconds',
    ]);
    for (const metric of SPEC_METRICS.filter((m) => m.group !== 'cluster')) assertShape(families, metric, noSampleYet.has(metric.name) ? 0 : 1);
    for (const metric of SVC_EXTRA_METRICS.filter((m) => m.name !== 'svc_tracing_spans_dropped_total')) {
      assertShape(families, metric, noSampleYet.has(metric.name) ? 0 : 1);
    }
  });

  test('traffic: every cache result, the hot, warm and origin sources, and the three kinds of route label', () => {
    const requests = (labels: Record<string, string>): number => valueOf(families, 'svc_requests_total', 'svc_requests_total', labels);
    const served = [
      { cache_result: 'MISS', source: 'origin', route: 'main' },
      { cache_result: 'HIT', source: 'hot', route: 'main' },
      { cache_result: 'HIT', source: 'warm', route: 'main' },
      { cache_result: 'STALE', source: 'hot', route: 'main' },
      { cache_result: 'REVALIDATED', source: 'origin', route: 'main' },
      { cache_result: 'BYPASS', source: 'origin', route: 'main' },
      { cache_result: 'MISS', source: 'origin', route: 'other.example:/other/' },
    ];
    for (const labels of served) assert.ok(requests({ method: 'GET', status: '200', ...labels }) >= 1, JSON.stringify(labels));
    assert.ok(requests({ method: 'GET', status: '404', route: '_default' }) >= 1, 'an unmatched request is route _default');
    const bytes = valueOf(families, 'svc_response_bytes_total', 'svc_response_bytes_total', { method: 'GET', cache_result: 'HIT', source: 'warm', route: 'main' });
    assert.ok(bytes >= 90_000, 'the warm hit sent its body');
    const count = valueOf(families, 'svc_request_duration_seconds', 'svc_request_duration_seconds_count', { cache_result: 'HIT', source: 'hot', route: 'main' });
    const inf = valueOf(families, 'svc_request_duration_seconds', 'svc_request_duration_seconds_bucket', { cache_result: 'HIT', source: 'hot', route: 'main', le: '+Inf' });
    assert.ok(count >= 1 && inf === count);
  });

  test('storage: tiers hold what was stored, the hot tier evicted, the 65th variant was refused, smuggling was counted', () => {
    const value = (name: string): number => valueOf(families, name, name);
    assert.ok(value('svc_hot_store_bytes') > 0 && value('svc_hot_store_entries') > 0);
    assert.ok(value('svc_warm_store_bytes') > 0 && value('svc_warm_store_entries') >= 6);
    assert.ok(value('svc_hot_store_evictions_total') >= 1);
    assert.ok(value('svc_vary_cap_hits_total') >= 1);
    assert.ok(Math.abs(value('svc_wal_last_sync_timestamp_seconds') - Date.now() / 1000) < 600, 'a recent sync');
    assert.equal(value('svc_http_smuggling_rejected_total'), 1);
    // A damaged record healing: test/warm/warm-tier.test.ts ("records damaged on disk are healed").
    assert.equal(value('svc_warm_store_self_heals_total'), 0);
    assert.equal(value('svc_wal_dropped_entries_total'), 0);
  });

  test('startup: phases complete, conditions met, one startup observed', () => {
    assert.equal(valueOf(families, 'svc_startup_phase', 'svc_startup_phase', { phase: 'log_replay' }), 0);
    for (const condition of ['data_listener_bound', 'warm_store_indexed']) {
      assert.equal(valueOf(families, 'svc_startup_condition_ready', 'svc_startup_condition_ready', { condition }), 1, condition);
    }
    assert.equal(valueOf(families, 'svc_startup_duration_seconds', 'svc_startup_duration_seconds_count'), 1);
  });

  test('CDN: the purge reached the fake CDN (ok, timed), the regex ban was skipped', () => {
    assert.equal(valueOf(families, 'svc_cdn_purge_total', 'svc_cdn_purge_total', { operation: 'purge', status: 'ok' }), 1);
    assert.equal(valueOf(families, 'svc_cdn_purge_total', 'svc_cdn_purge_total', { operation: 'purge', status: 'error' }), 0);
    assert.equal(valueOf(families, 'svc_cdn_purge_duration_seconds', 'svc_cdn_purge_duration_seconds_count', { operation: 'purge' }), 1);
    assert.equal(valueOf(families, 'svc_cdn_purge_skipped_total', 'svc_cdn_purge_skipped_total', { reason: 'regex_metacharacters' }), 1);
  });

  test('refresh: every metric carries the route that has refresh_before_expiry, and only that one', () => {
    for (const metric of SPEC_METRICS.filter((m) => m.group === 'refresh' && m.name !== 'svc_refresh_errors_total')) {
      const routes = new Set(families.get(metric.name)!.samples.map((s) => s.labels.route));
      assert.deepEqual([...routes], ['main'], metric.name);
    }
    // Results and skips moving: test/refresh/node-refresh.test.ts.
    assert.equal(valueOf(families, 'svc_refresh_registry_size', 'svc_refresh_registry_size', { route: 'main' }) >= 0, true);
  });

  test('nothing else named svc_ is exported, the runtime metrics are, and a single node has no cluster metrics', () => {
    const known = new Set([...SPEC_METRICS, ...SVC_EXTRA_METRICS].map((m) => m.name));
    const stray = [...families.keys()].filter((name) => name.startsWith('svc_') && !known.has(name));
    assert.deepEqual(stray, []);
    for (const prefix of RUNTIME_METRIC_PREFIXES) assert.ok([...families.keys()].some((name) => name.startsWith(prefix)), prefix);
    assert.equal(families.get('svc_cluster_mode_info'), undefined);
  });
});

async function admin(node: ClusterNodeProcess, path: string, body: unknown): Promise<number> {
  const answer = await fetchRaw(`${node.adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return answer.status;
}

async function ownerOf(asker: ClusterNodeProcess, path: string): Promise<string> {
  const answer = await fetchRaw(`${asker.adminUrl}/v1/stats?url=${encodeURIComponent(`http://${SITE}${path}`)}`, {
    headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
  });
  return (JSON.parse(answer.body) as { ring: { owner: string } }).ring.owner;
}

const metricsOf = async (node: ClusterNodeProcess): Promise<Map<string, Family>> => parseExposition((await fetchRaw(`${node.adminUrl}/metrics`)).body);

describe('spec §6.5 cluster table, strong mode (two real processes)', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;
  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `${request.url}` }));
    cluster = await startSvcCluster({ names: ['a', 'b'], mode: 'strong', originUrl: origin.url });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
  });

  test('peer fetch, invalidations by HTTP and gossip, broadcast failures, mode and startup phases', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    let path = '';
    for (let i = 0; i < 200 && path === ''; i++) if ((await ownerOf(a, `/owned-${i}`)) === 'b') path = `/owned-${i}`;
    for (let i = 0; i < 2; i++) assert.equal((await fetchRaw(`${a.dataUrl}${path}`, { headers: { host: SITE } })).status, 200);
    assert.equal(await admin(a, '/v1/purge', { url: `http://${SITE}${path}` }), 200);
    let families = await metricsOf(a);
    for (const metric of SPEC_METRICS.filter((m) => m.group === 'cluster' && m.labels.length === 0)) assertShape(families, metric);
    assertShape(families, spec('svc_cluster_mode_info'));
    assertShape(families, spec('svc_cluster_invalidations_http_total'));
    assertShape(families, spec('svc_cluster_invalidations_gossip_total'));
    assert.equal(valueOf(families, 'svc_cluster_mode_info', 'svc_cluster_mode_info', { mode: 'strong' }), 1);
    assert.equal(valueOf(families, 'svc_peer_fetch_misses_total', 'svc_peer_fetch_misses_total'), 1, 'the first fetch went to the origin');
    assert.equal(valueOf(families, 'svc_peer_fetch_hits_total', 'svc_peer_fetch_hits_total'), 1, 'the second was a hit at the owner');
    assert.equal(valueOf(families, 'svc_peer_fetch_duration_seconds', 'svc_peer_fetch_duration_seconds_count'), 2);
    // Reaching hop_limit needs two nodes disagreeing about the ring: sim and transport tests; here it is only exported.
    assert.equal(valueOf(families, 'svc_peer_fetch_hop_limit_hits_total', 'svc_peer_fetch_hop_limit_hits_total'), 0);
    assert.ok(valueOf(families, 'svc_cluster_invalidations_http_total', 'svc_cluster_invalidations_http_total', { type: 'purge' }) >= 1);
    assert.ok(valueOf(families, 'svc_cluster_invalidations_gossip_total', 'svc_cluster_invalidations_gossip_total', { type: 'purge' }) >= 1);
    assert.ok(valueOf(families, 'svc_requests_total', 'svc_requests_total', { source: 'peer', route: 'all' }) >= 1, 'source="peer"');
    assert.equal(valueOf(families, 'svc_startup_phase', 'svc_startup_phase', { phase: 'ring_build' }), 0, 'ring_build is done before ready');
    // The join goes on in the background (backing off between seeds) after others have joined this
    // node: active (1) until one seed answers, then complete (0).
    await eventually('the join phase to complete', async () => valueOf(await metricsOf(a), 'svc_startup_phase', 'svc_startup_phase', { phase: 'join' }), (phase) => phase === 0, { timeoutMs: 30_000 });

    // B is gone and A does not know yet: the HTTP path of the next purge misses it.
    await cluster.kill('b');
    assert.equal(await admin(a, '/v1/purge', { url: `http://${SITE}/after-b` }), 200);
    families = await metricsOf(a);
    assertShape(families, spec('svc_cluster_broadcast_failures_total'));
    const failures = families.get('svc_cluster_broadcast_failures_total')!.samples;
    assert.ok(failures.some((s) => s.labels.type === 'purge' && s.value >= 1), JSON.stringify(failures));
  });
});

describe('spec §6.5 cluster table, eventual mode (two real processes)', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;
  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=600' }, body: 'eventual' }));
    cluster = await startSvcCluster({ names: ['a', 'b'], mode: 'eventual', originUrl: origin.url });
  });
  after(async () => {
    await cluster?.close();
    await origin?.close();
  });

  test('the mode and gossip are there, the peer-fetch metrics stay zero', async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    for (let i = 0; i < 5; i++) await fetchRaw(`${a.dataUrl}/e-${i}`, { headers: { host: SITE } });
    assert.equal(await admin(a, '/v1/purge', { url: `http://${SITE}/e-0` }), 200);
    const families = await metricsOf(a);
    assert.equal(valueOf(families, 'svc_cluster_mode_info', 'svc_cluster_mode_info', { mode: 'eventual' }), 1);
    assertShape(families, spec('svc_cluster_invalidations_gossip_total'));
    assert.ok(valueOf(families, 'svc_cluster_invalidations_gossip_total', 'svc_cluster_invalidations_gossip_total', { type: 'purge' }) >= 1);
    assertShape(families, spec('svc_cluster_gossip_drops_total'));
    for (const name of ['svc_peer_fetch_hits_total', 'svc_peer_fetch_misses_total', 'svc_peer_fetch_hop_limit_hits_total']) {
      assertShape(families, spec(name));
      assert.equal(valueOf(families, name, name), 0, name);
    }
    assert.equal(valueOf(families, 'svc_peer_fetch_duration_seconds', 'svc_peer_fetch_duration_seconds_count'), 0);
    assert.equal(families.get('svc_cluster_invalidations_http_total')?.samples.length ?? 0, 0, 'no HTTP path in eventual mode');
  });
});
