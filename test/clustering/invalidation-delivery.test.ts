// Strong and eventual delivery (spec §1.4) over real cluster members on the simulated network.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createRandom } from '../../cluster/index.js';
import { SimCluster } from '../../sim/sim-cluster.js';
import { InvalidationDelivery, type ClusterMode, type DeliveryPath } from '../../src/clustering/invalidation-delivery.js';
import type { InvalidationKind, InvalidationMessage } from '../../src/clustering/invalidation-message.js';

interface Applied {
  node: number;
  id: string;
  path: DeliveryPath;
  atMs: number;
}

interface Harness {
  cluster: SimCluster;
  deliveries: InvalidationDelivery[];
  applied: Applied[];
  counted: { http: InvalidationKind[]; gossip: InvalidationKind[]; failures: string[] };
}

async function harness(mode: ClusterMode, nodes: number, seed: number): Promise<Harness> {
  const cluster = new SimCluster({ nodes, random: createRandom(seed) });
  const applied: Applied[] = [];
  const counted = { http: [] as InvalidationKind[], gossip: [] as InvalidationKind[], failures: [] as string[] };
  const deliveries: InvalidationDelivery[] = [];
  let nextId = 0;
  cluster.onMember((index, member) => {
    const delivery = new InvalidationDelivery({
      member,
      mode,
      apply: (message, path) => void applied.push({ node: index, id: message.id, path, atMs: cluster.clock.now() }),
      keyOf: (url) => url,
      counters: {
        http: (type) => counted.http.push(type),
        gossip: (type) => counted.gossip.push(type),
        failure: (type, reason) => counted.failures.push(`${type}:${reason}`),
      },
      newId: () => `id-${nextId++}`,
    });
    delivery.start();
    deliveries[index] = delivery;
  });
  await cluster.bootstrap(createRandom(seed + 1), 500);
  const converged = await cluster.waitFor(() => cluster.converged(nodes), 100, 30_000);
  assert.notEqual(converged, null, 'the cluster converges before the test');
  return { cluster, deliveries, applied, counted };
}

/** Publishes from `from` while the simulated clock runs, and lets gossip finish for `settleMs`. */
async function publish(h: Harness, from: number, message: InvalidationMessage, settleMs: number): Promise<void> {
  let done = false;
  const publishing = h.deliveries[from]!.publish(message).then(() => (done = true));
  await h.cluster.waitFor(() => done, 5, 5_000);
  await publishing;
  await h.cluster.clock.runFor(settleMs);
}

describe('invalidation delivery', () => {
  test('strong: a purge reaches every peer by HTTP fan-out at once, and each applies it once', async () => {
    const h = await harness('strong', 6, 11);
    const startMs = h.cluster.clock.now();
    await publish(h, 0, { id: 'purge-1', type: 'purge', url: 'http://a.example/x' }, 10_000);
    const byNode = new Map<number, Applied[]>();
    for (const a of h.applied.filter((a) => a.id === 'purge-1')) byNode.set(a.node, [...(byNode.get(a.node) ?? []), a]);
    assert.deepEqual([...byNode.keys()].sort(), [1, 2, 3, 4, 5], 'every other node applied it (the origin applies its own)');
    for (const [node, list] of byNode) {
      assert.equal(list.length, 1, `node ${node} applied it once although it came by both paths`);
      assert.equal(list[0]!.path, 'http');
      assert.ok(list[0]!.atMs - startMs < 1_000, `node ${node} had it within 1 s`);
    }
    assert.deepEqual(h.counted.http, ['purge']);
    assert.deepEqual(h.counted.gossip, ['purge'], 'dual path: gossip too');
  });

  test('strong: a crashed peer is counted as a broadcast failure and the others still apply', async () => {
    const h = await harness('strong', 5, 12);
    h.cluster.crash(4);
    await publish(h, 0, { id: 'ban-1', type: 'ban', surrogate_key: 'product-1' }, 2_000);
    const nodes = h.applied.filter((a) => a.id === 'ban-1').map((a) => a.node).sort();
    assert.deepEqual(nodes, [1, 2, 3]);
    assert.equal(h.counted.failures.length, 1);
    assert.match(h.counted.failures[0]!, /^ban:(timeout|refused)$/);
  });

  test('strong: refresh goes to the owner of the key only', async () => {
    const h = await harness('strong', 5, 13);
    const url = 'http://a.example/refresh-me';
    const ownerName = h.cluster.member(0).ring.owner(url)!;
    const owner = h.cluster.indexOf(ownerName);
    const from = owner === 1 ? 2 : 1;
    await publish(h, from, { id: 'refresh-1', type: 'refresh', url }, 500);
    const nodes = h.applied.filter((a) => a.id === 'refresh-1').map((a) => a.node);
    assert.deepEqual(nodes, [owner]);
    assert.deepEqual(h.counted.gossip, [], 'no gossip while the owner answers');
  });

  test('eventual: gossip alone brings a purge to every node within 5 s, once each', async () => {
    const h = await harness('eventual', 8, 14);
    const startMs = h.cluster.clock.now();
    await publish(h, 3, { id: 'purge-e', type: 'purge', url: 'http://a.example/y' }, 5_000);
    const applied = h.applied.filter((a) => a.id === 'purge-e');
    assert.deepEqual(applied.map((a) => a.node).sort(), [0, 1, 2, 4, 5, 6, 7]);
    assert.ok(applied.every((a) => a.path === 'gossip' && a.atMs - startMs <= 5_000));
    assert.deepEqual(h.counted.http, [], 'eventual mode never uses the HTTP path');
  });
});

describe('invalidation anti-entropy', () => {
  test('a node that missed invalidations applies them from the push-pull state of a peer, once, within the log bounds', async () => {
    const h = await harness('eventual', 3, 21);
    let nowMs = 1_000_000;
    const applied: string[] = [];
    const quiet = {
      member: h.cluster.member(2),
      mode: 'eventual' as const,
      keyOf: (url: string) => url,
      counters: { http: () => undefined, gossip: () => undefined, failure: () => undefined },
      newId: () => 'unused',
      now: () => nowMs,
      logCapacity: 2,
      logMaxAgeMs: 60_000,
    };
    const sender = new InvalidationDelivery({ ...quiet, apply: () => undefined });
    const receiver = new InvalidationDelivery({ ...quiet, apply: (message) => void applied.push(message.id) });
    await sender.publish({ id: 'old', type: 'purge', url: 'http://a.example/old' });
    nowMs += 61_000; // 'old' is now past the log's age bound
    await sender.publish({ id: 'p1', type: 'purge', url: 'http://a.example/1' });
    await sender.publish({ id: 'p2', type: 'ban', surrogate_key: 'x' });
    await sender.publish({ id: 'p3', type: 'refresh', url: 'http://a.example/3' }); // capacity 2: p1 drops
    receiver.merge(sender.state());
    receiver.merge(sender.state());
    await h.cluster.clock.runFor(1);
    assert.deepEqual(applied, ['p2', 'p3'], 'the bounded log carries the newest, and each applies once');
    receiver.merge(new TextEncoder().encode('not json'));
    assert.deepEqual(applied, ['p2', 'p3'], 'a malformed state changes nothing');
  });
});
