// svc's invalidation stack (ClusterInvalidator, InvalidationSync, the log) on real cluster members
// over the simulated network: each mode's paths, batches and pulls, catch-up after an absence, gaps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createRandom } from '../../cluster/index.js';
import type { SimCluster } from '../../sim/sim-cluster.js';
import type { ClusterMode, DeliveryPath } from '../../src/clustering/invalidation-delivery.js';
import type { InvalidationKind, InvalidationMessage } from '../../src/clustering/invalidation-message.js';
import { SvcSimNodes } from '../../src/clustering/scenarios/svc-sim-nodes.js';
import { ORIGIN_CLOCK_SKEW_MS } from '../../src/clustering/cluster-invalidator.js';

interface Applied {
  node: number;
  id: string;
  type: InvalidationKind;
  path: DeliveryPath;
  atMs: number;
}

interface Harness {
  cluster: SimCluster;
  nodes: SvcSimNodes;
  applied: Applied[];
  counted: { http: InvalidationKind[]; gossip: InvalidationKind[]; failures: string[] };
}

async function harness(mode: ClusterMode, size: number, seed: number): Promise<Harness> {
  const applied: Applied[] = [];
  const counted = { http: [] as InvalidationKind[], gossip: [] as InvalidationKind[], failures: [] as string[] };
  const nodes: SvcSimNodes = new SvcSimNodes({ nodes: size, random: createRandom(seed) }, {
    mode,
    onApplied: (node, message, path) => void applied.push({ node, id: message.id, type: message.type, path, atMs: nodes.cluster.clock.now() }),
    counters: () => ({
      http: (type) => counted.http.push(type),
      gossip: (type) => counted.gossip.push(type),
      failure: (type, reason) => counted.failures.push(`${type}:${reason}`),
    }),
  });
  const { cluster } = nodes;
  await cluster.bootstrap(createRandom(seed + 1), 500);
  const converged = await cluster.waitFor(() => cluster.converged(size), 100, 30_000);
  assert.notEqual(converged, null, 'the cluster converges before the test');
  return { cluster, nodes, applied, counted };
}

/** Runs an operation at node `from` while the simulated clock runs; resolves with its result. */
async function at<T>(h: Harness, work: () => Promise<T>): Promise<T> {
  let result: { value: T } | undefined;
  const running = work().then((value) => (result = { value }));
  await h.nodes.settle();
  await h.cluster.waitFor(() => result !== undefined, 5, 10_000);
  await running;
  return result!.value;
}

function appliedBy(h: Harness, predicate: (a: Applied) => boolean): number[] {
  return h.applied.filter(predicate).map((a) => a.node).sort((x, y) => x - y);
}

describe('invalidation delivery', () => {
  test('strong: a purge reaches every peer by HTTP at once, once each, and the answer says how many confirmed', async () => {
    const h = await harness('strong', 6, 11);
    const startMs = h.cluster.clock.now();
    const result = await at(h, () => h.nodes.life(0).invalidator.purge('http://a.example/x'));
    await h.cluster.clock.runFor(10_000);
    assert.deepEqual(result.peers, { confirmed: 5, missed: 0, missedNames: [] });
    const applied = h.applied.filter((a) => a.type === 'purge');
    assert.deepEqual(applied.map((a) => a.node).sort(), [1, 2, 3, 4, 5], 'every other node applied it once although it came by both paths');
    assert.ok(applied.every((a) => a.path === 'http' && a.atMs - startMs < 1_000));
    assert.deepEqual(h.counted.http, ['purge']);
    assert.deepEqual(h.counted.gossip, ['purge'], 'dual path: gossip too');
  });

  test('strong: a crashed peer is counted as a broadcast failure and the others still apply', async () => {
    const h = await harness('strong', 5, 12);
    h.nodes.crash(4);
    const result = await at(h, () => h.nodes.life(0).invalidator.ban({ surrogate_key: 'product-1' }));
    await h.cluster.clock.runFor(2_000);
    assert.deepEqual(appliedBy(h, (a) => a.type === 'ban'), [1, 2, 3]);
    assert.deepEqual(result.peers, { confirmed: 3, missed: 1, missedNames: [h.cluster.names[4]!] });
    assert.equal(h.counted.failures.length, 1);
    assert.match(h.counted.failures[0]!, /^ban:(timeout|refused)$/);
  });

  test('strong: a refresh reaches every node that may hold a copy, not only the owner', async () => {
    const h = await harness('strong', 5, 13);
    const result = await at(h, () => h.nodes.life(2).invalidator.refresh('http://a.example/refresh-me'));
    await h.cluster.clock.runFor(500);
    assert.deepEqual(appliedBy(h, (a) => a.type === 'refresh'), [0, 1, 3, 4]);
    assert.deepEqual(result.peers, { confirmed: 4, missed: 0, missedNames: [] });
  });

  test('eventual: gossip alone brings a purge to every node within 5 s, once each', async () => {
    const h = await harness('eventual', 8, 14);
    const startMs = h.cluster.clock.now();
    const result = await at(h, () => h.nodes.life(3).invalidator.purge('http://a.example/y'));
    await h.cluster.clock.runFor(5_000);
    assert.equal(result.peers, undefined, 'no fan-out in eventual mode');
    const applied = h.applied.filter((a) => a.type === 'purge');
    assert.deepEqual(applied.map((a) => a.node).sort(), [0, 1, 2, 4, 5, 6, 7]);
    assert.ok(applied.every((a) => a.path === 'gossip' && a.atMs - startMs <= 5_000));
    assert.deepEqual(h.counted.http, [], 'eventual mode never uses the HTTP path');
  });

  test('eventual: a batch of 1,000 URLs, a 100 KB URL and a 100 KB regex reach every node (announced, then pulled)', async () => {
    const h = await harness('eventual', 5, 15);
    const startMs = h.cluster.clock.now();
    const urls = Array.from({ length: 1_000 }, (_, i) => `http://a.example/batch/${i}/${'x'.repeat(40)}`);
    await at(h, () => h.nodes.life(1).invalidator.purgeBatch(urls));
    await at(h, () => h.nodes.life(2).invalidator.purge(`http://a.example/${'u'.repeat(100_000)}`));
    await at(h, () => h.nodes.life(3).invalidator.ban({ path_regex: `^/${'r'.repeat(100_000)}` }));
    await h.cluster.clock.runFor(5_000);
    assert.deepEqual(appliedBy(h, (a) => a.type === 'purge_batch'), [0, 2, 3, 4]);
    assert.deepEqual(appliedBy(h, (a) => a.type === 'purge'), [0, 1, 3, 4]);
    assert.deepEqual(appliedBy(h, (a) => a.type === 'ban'), [0, 1, 2, 4]);
    assert.ok(h.applied.every((a) => a.atMs - startMs < 5_000));
  });

  test('eventual: 1,000 purges in one second reach every one of 5 nodes within 5 s, each once', async () => {
    const h = await harness('eventual', 5, 16);
    const issued = new Map<string, number>();
    const startMs = h.cluster.clock.now();
    for (let i = 0; i < 1_000; i++) {
      const origin = i % 5;
      void h.nodes.life(origin).invalidator.purge(`http://a.example/burst/${i}`);
      issued.set(`${i}`, h.cluster.clock.now());
      await h.nodes.settle();
      await h.cluster.clock.runFor(1);
    }
    await h.cluster.clock.runFor(5_000 - (h.cluster.clock.now() - startMs) + 1_000);
    assert.equal(h.applied.length, 1_000 * 4, 'every purge applied once on each of the 4 other nodes');
    const latest = Math.max(...h.applied.map((a) => a.atMs)) - startMs;
    assert.ok(latest < 6_000, `the last purge reached the last node ${latest} ms after the burst began`);
  });
});

describe('catch-up', () => {
  test('a node down during 2,000 invalidations has them all, as of when they were made, before it serves again', async () => {
    const h = await harness('strong', 4, 21);
    h.nodes.disks[3]!.holdsEntries = true;
    h.nodes.crash(3);
    const made: InvalidationMessage[] = [];
    for (let i = 0; i < 2_000; i++) {
      const node = h.nodes.life(i % 3);
      const work =
        i % 10 === 0 ? node.invalidator.ban({ surrogate_key: `tag-${i}` }) : i % 10 === 1 ? node.invalidator.refresh(`http://a.example/${i}`) : node.invalidator.purge(`http://a.example/${i % 500}`);
      void work;
      if (i % 50 === 0) {
        await h.nodes.settle();
        await h.cluster.clock.runFor(100);
      }
    }
    await h.nodes.settle();
    await h.cluster.clock.runFor(1_000);
    for (let i = 0; i < 3; i++) for (const id of h.nodes.life(i).log.messagesIn(h.nodes.life(i).log.digest().map((d) => d.bucket), 1e9).messages) made.push(id);
    const expected = new Set(made.map((m) => m.id));
    await h.nodes.restart(3, [0]);
    const caught = await h.cluster.waitFor(() => h.nodes.life(3).caughtUp !== undefined, 10, 30_000);
    assert.notEqual(caught, null, 'node 3 caught up');
    const life = h.nodes.life(3);
    assert.equal(life.caughtUp?.kind, 'peer');
    const engine = h.nodes.disks[3]!.engine;
    const callsBefore = engine.calls.filter((call) => call.calledMs <= life.caughtUp!.atMs);
    const byId = new Map(made.map((m) => [m.id, m]));
    for (const id of expected) {
      const calls = engine.callsFor(id);
      assert.equal(calls.length, 1, `${id} applied once`);
      assert.ok(calls[0]!.atMs <= byId.get(id)!.at + ORIGIN_CLOCK_SKEW_MS, `${id} applied as of when it was made`);
    }
    assert.equal(callsBefore.length, engine.calls.length, 'all of them before it counted as caught up');
    assert.deepEqual(engine.gapsBeforeMs, [], 'its log was recent enough: no gap');
  });

  test('a node whose peers forgot part of what it missed distrusts what it cached before', async () => {
    const h = await harness('eventual', 3, 22);
    h.nodes.disks[2]!.holdsEntries = true;
    await h.cluster.clock.runFor(11_000); // a sync heartbeat: node 2 records when it last had everything
    h.nodes.crash(2);
    // The others' logs cover back to the start of the cluster; a node away longer than that would be
    // told so by a coverage after its last sync. Here: moving their completeness forward stands for it.
    const coverage = h.cluster.clock.now() + 500;
    await h.cluster.clock.runFor(1_000);
    for (const i of [0, 1]) await h.nodes.life(i).log.setCompleteSince(coverage);
    await at(h, () => h.nodes.life(0).invalidator.purge('http://a.example/late'));
    await h.nodes.restart(2, [0]);
    await h.cluster.waitFor(() => h.nodes.life(2).caughtUp !== undefined, 10, 30_000);
    const caughtUp = h.nodes.life(2).caughtUp;
    assert.equal(caughtUp?.kind === 'peer' ? caughtUp.gapBeforeMs : 'none', coverage);
    assert.deepEqual(h.nodes.disks[2]!.engine.gapsBeforeMs, [coverage]);
  });

  test('a restarted node is told again what it applied before, and applies none of it twice', async () => {
    const h = await harness('eventual', 3, 23);
    for (let i = 0; i < 20; i++) void h.nodes.life(0).invalidator.ban({ surrogate_key: `t-${i}` });
    await h.nodes.settle();
    await h.cluster.clock.runFor(5_000);
    const engine = h.nodes.disks[1]!.engine;
    assert.equal(engine.calls.length, 20);
    await h.nodes.restart(1, [0]);
    await h.cluster.waitFor(() => h.nodes.life(1).caughtUp !== undefined, 10, 30_000);
    await h.cluster.clock.runFor(60_000);
    assert.equal(engine.calls.length, 20, 'no invalidation applied again after the restart');
  });
});
