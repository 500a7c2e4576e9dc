// The warm tier through a real svc node (issue 3 item 7): hot evictions are served from disk and
// promoted, a restarted node serves what it stored without the origin from its first request (the
// index is lmdb's: nothing is rebuilt, issue 29 item 2), and records damaged on disk are healed,
// never served.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchRaw, header } from '../support/http.js';
import { freePort } from '../../bench/support/free-port.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { metricValue } from '../support/caching-fixture.js';
import { keyOfUrl } from '../../src/invalidation/url-key.js';
import { recordId } from '../../src/store/warm/record-codec.js';
import { openWarmTables } from '../../src/store/warm/tables.js';
import { openWarmStore } from '../../src/store/warm/warm-store.js';
import { makeEntry } from '../store/entry-fixture.js';

/** Records a warm tier holds when the node starts in the indexing test. */
const FILLER_RECORDS = 20_000;

/** The body the origin serves for a path: deterministic, so a restarted node's answers can be checked. */
const bodyOf = (path: string): string => `warm body of ${path} `.padEnd(400, '.');

interface WarmNode {
  svc: SvcUnderTest;
  dataPort: number;
}

/** Config for a node whose warm tier lives in `dir`, on fixed ports so keys survive a restart. */
async function startWarmNode(
  origin: TestOrigin,
  dir: string,
  ports: { data: number; admin: number },
  hotMaxBytes = 64 * 1024 * 1024,
  workers?: number,
): Promise<WarmNode> {
  const svc = await startSvc([origin.url], {
    dir,
    config: {
      ...(workers === undefined ? {} : { workers }),
      listen: `127.0.0.1:${ports.data}`,
      admin: { listen: `127.0.0.1:${ports.admin}`, token: 'test-admin-token-0123456789' },
      hot_max_bytes: hotMaxBytes,
      warm: { path: join(dir, 'warm'), max_bytes: 16 * 1024 * 1024 },
    },
  });
  return { svc, dataPort: ports.data };
}

async function metrics(svc: SvcUnderTest): Promise<string> {
  return (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
}

const requestsFrom = (text: string, source: string, cacheResult: string): number =>
  metricValue(text, `svc_requests_total{method="GET",status="200",cache_result="${cacheResult}",source="${source}",route="main"}`);

describe('warm tier through svc', { timeout: 60_000 }, () => {
  let origin: TestOrigin;
  let dir: string;
  let ports: { data: number; admin: number };

  before(async () => {
    origin = await startTestOrigin((req) => ({ headers: { 'cache-control': 'max-age=3600', 'content-type': 'text/plain' }, body: bodyOf(req.url ?? '/') }));
    dir = await mkdtemp(join(tmpdir(), 'svc-warm-e2e-'));
    ports = { data: await freePort(), admin: await freePort() };
  });
  after(async () => {
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  const originCount = (path: string): number => origin.requests.filter((r) => r.url === path).length;

  test('an entry evicted from a tiny hot tier is served from warm (HIT, source="warm") and promoted', async () => {
    const nodeDir = join(dir, 'evict');
    const { svc } = await startWarmNode(origin, nodeDir, { data: await freePort(), admin: await freePort() }, 1500);
    try {
      for (const path of ['/evict/a', '/evict/b', '/evict/c', '/evict/d']) await fetchRaw(`${svc.dataUrl}${path}`);
      assert.equal(svc.node.cache.hot.variants(`http://${svc.dataUrl.slice(7)}/evict/a`).length, 0, '/evict/a left the hot tier');
      const before = await metrics(svc);
      const fromWarm = await fetchRaw(`${svc.dataUrl}/evict/a`);
      assert.equal(header(fromWarm, 'x-cache'), 'HIT');
      assert.equal(fromWarm.body, bodyOf('/evict/a'));
      const afterWarm = await metrics(svc);
      assert.equal(requestsFrom(afterWarm, 'warm', 'HIT') - requestsFrom(before, 'warm', 'HIT'), 1);
      // Promoted: the next hit comes from memory.
      const fromHot = await fetchRaw(`${svc.dataUrl}/evict/a`);
      assert.equal(fromHot.body, bodyOf('/evict/a'));
      const afterHot = await metrics(svc);
      assert.equal(requestsFrom(afterHot, 'hot', 'HIT') - requestsFrom(afterWarm, 'hot', 'HIT'), 1);
      assert.equal(originCount('/evict/a'), 1);
    } finally {
      await svc.stop();
    }
  });

  test('after a restart, entries are served from warm at once, without origin traffic', async () => {
    const nodeDir = join(dir, 'restart');
    const paths = Array.from({ length: 40 }, (_, i) => `/restart/${i}`);
    const first = await startWarmNode(origin, nodeDir, ports);
    try {
      for (const path of paths) assert.equal(header(await fetchRaw(`${first.svc.dataUrl}${path}`), 'x-cache'), 'MISS');
    } finally {
      await first.svc.stop();
    }
    const originBefore = origin.requests.length;
    const second = await startWarmNode(origin, nodeDir, ports);
    try {
      const text = await metrics(second.svc);
      assert.equal(metricValue(text, 'svc_warm_store_entries'), paths.length);
      assert.ok(metricValue(text, 'svc_warm_store_bytes') >= paths.length * 400);
      assert.match(text, /^svc_startup_phase\{phase="log_replay"\} 0$/m);
      const ready = await fetchRaw(`${second.svc.adminUrl}/readyz`);
      assert.equal(ready.status, 200);
      for (const path of paths) {
        const answer = await fetchRaw(`${second.svc.dataUrl}${path}`);
        assert.equal(header(answer, 'x-cache'), 'HIT', path);
        assert.equal(answer.body, bodyOf(path));
      }
      assert.equal(origin.requests.length, originBefore, 'no origin traffic after the restart');
      assert.equal(requestsFrom(await metrics(second.svc), 'warm', 'HIT'), paths.length);
    } finally {
      await second.svc.stop();
    }
  });

  test('a node restarted over many warm records serves them from its first request, nothing rebuilt or awaited', async () => {
    const nodeDir = join(dir, 'at-once');
    const nodePorts = { data: await freePort(), admin: await freePort() };
    const first = await startWarmNode(origin, nodeDir, nodePorts);
    await fetchRaw(`${first.svc.dataUrl}/served-at-once`);
    await first.svc.stop();
    const filling = await openWarmStore({ path: join(nodeDir, 'warm'), maxBytes: 16 * 1024 * 1024, writeQueueLength: FILLER_RECORDS });
    // Small records, so that all of them and the node's own fit its warm.max_bytes.
    for (let i = 0; i < FILLER_RECORDS; i++) filling.put({ ...makeEntry({ key: `https://filler.example/${i}`, body: Buffer.from('f'), headers: [] }), tags: [] });
    await filling.close();

    const { svc } = await startWarmNode(origin, nodeDir, nodePorts, undefined, 1);
    try {
      // The first request after the start: a warm HIT, not the origin.
      const fromWarm = await fetchRaw(`${svc.dataUrl}/served-at-once`);
      assert.equal(header(fromWarm, 'x-cache'), 'HIT');
      assert.equal(originCount('/served-at-once'), 1, 'served from the warm tier, not the origin');
      const ready = await fetchRaw(`${svc.adminUrl}/readyz?detail=1`);
      assert.equal(ready.status, 200);
      const condition = (JSON.parse(ready.body) as { conditions: { name: string; ready: boolean; reason: string }[] }).conditions.find((c) => c.name === 'warm_store_indexed');
      assert.deepEqual({ ready: condition?.ready, reason: condition?.reason }, { ready: true, reason: `${FILLER_RECORDS + 1} entries on disk, served from the open (nothing to rebuild)` });
      const text = await metrics(svc);
      assert.match(text, /^svc_startup_phase\{phase="log_replay"\} 0$/m);
      assert.equal(metricValue(text, 'svc_warm_store_entries'), FILLER_RECORDS + 1);
    } finally {
      await svc.stop();
    }
  });

  test('records damaged on disk are healed and never served: the origin is asked instead', async () => {
    const nodeDir = join(dir, 'heal');
    const nodePorts = { data: await freePort(), admin: await freePort() };
    const paths = ['/heal/damaged-body', '/heal/damaged-head', '/heal/intact'];
    const first = await startWarmNode(origin, nodeDir, nodePorts);
    for (const path of paths) await fetchRaw(`${first.svc.dataUrl}${path}`);
    await first.svc.stop();

    const tables = openWarmTables(join(nodeDir, 'warm'));
    const host = `127.0.0.1:${nodePorts.data}`;
    const damageAt = { '/heal/damaged-body': (length: number) => length - 5, '/heal/damaged-head': () => 12 };
    for (const [path, at] of Object.entries(damageAt)) {
      const id = recordId(keyOfUrl(`http://${host}${path}`)!, '');
      const stored = tables.records.getBinary(id);
      assert.ok(stored !== undefined, `${path} is on disk`);
      const damaged = Buffer.from(stored);
      damaged[at(damaged.length)]! ^= 0x01;
      await tables.records.put(id, damaged);
    }
    await tables.env.close();

    const originBefore = { body: originCount('/heal/damaged-body'), head: originCount('/heal/damaged-head'), intact: originCount('/heal/intact') };
    const second = await startWarmNode(origin, nodeDir, nodePorts);
    try {
      for (const path of Object.keys(damageAt)) {
        const answer = await fetchRaw(`${second.svc.dataUrl}${path}`);
        assert.equal(answer.body, bodyOf(path), `${path}: the origin's bytes, not the damaged record`);
        assert.equal(header(answer, 'x-cache'), 'MISS');
      }
      assert.equal(originCount('/heal/damaged-body'), originBefore.body + 1);
      assert.equal(originCount('/heal/damaged-head'), originBefore.head + 1);
      const intact = await fetchRaw(`${second.svc.dataUrl}/heal/intact`);
      assert.equal(header(intact, 'x-cache'), 'HIT');
      assert.equal(originCount('/heal/intact'), originBefore.intact);
      assert.equal(metricValue(await metrics(second.svc), 'svc_warm_store_self_heals_total'), 2);
    } finally {
      await second.svc.stop();
    }
  });
});
