// Issue 18 item 3: in a cluster each invalidation reaches the CDN once. The node whose admin API
// received it sends it; the nodes it reaches through cluster delivery apply it without forwarding it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeCdn, OK, type FakeCdn } from './support/fake-cdn.js';
import { eventually } from '../support/eventually.js';
import { startCdnNode, type CdnNode } from './support/cdn-node.js';
import { freePort } from '../../bench/support/free-port.js';
import { CLUSTER_SECRET } from '../support/svc-cluster.js';

const SITE = 'https://shop.example.com';

describe('CDN propagation in a cluster', () => {
  let cdn: FakeCdn;
  let nodes: CdnNode[] = [];

  before(async () => {
    cdn = await startFakeCdn(() => OK);
    const binds = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    nodes = await Promise.all(
      binds.map((bind, index) =>
        startCdnNode(cdn, { config: { hop_limit: 2, cluster: { mode: 'strong', node_name: `n${index}`, secret: CLUSTER_SECRET, bind, join: binds.filter((b) => b !== bind) } } }),
      ),
    );
    await eventually(
      'membership to converge',
      () => Promise.all(nodes.map(async (node) => ((await node.admin('GET', '/v1/cluster/peers')).json as { state: string }[]).filter((peer) => peer.state === 'alive').length)),
      (alive) => alive.every((count) => count === nodes.length),
      { timeoutMs: 20_000 },
    );
  });
  after(async () => {
    for (const node of nodes) await node.stop();
    await cdn.close();
  });

  async function applied(type: 'purge' | 'ban', count: number): Promise<void> {
    await eventually(
      `every node to apply ${count} ${type}`,
      () => Promise.all(nodes.map(async (node) => ((await node.admin('GET', '/v1/stats')).json as { invalidations: Record<string, number> }).invalidations[type])),
      (applied) => applied.every((each) => each === count),
    );
    // Whatever any node queued for the CDN has gone out.
    await eventually('nothing pending', () => Promise.all(nodes.map(async (node) => (await node.status()).pending)), (pending) => pending.every((count) => count === 0));
  }

  test('a purge sent to one node is one CDN call, from that node alone', async () => {
    await nodes[0]!.admin('POST', '/v1/purge', { url: `${SITE}/once` });
    await applied('purge', 1);
    assert.deepEqual(
      cdn.calls.map((call) => call.body),
      [{ files: [`${SITE}/once`] }],
    );
    const sentBy = await Promise.all(nodes.map(async (node) => (await node.status()).last_success_at !== null));
    assert.deepEqual(sentBy, [true, false, false]);
  });

  test('a ban sent to another node is one CDN call too', async () => {
    await nodes[2]!.admin('POST', '/v1/ban', { surrogate_key: 'product-7' });
    await applied('ban', 1);
    assert.deepEqual(
      cdn.calls.map((call) => call.body),
      [{ files: [`${SITE}/once`] }, { tags: ['product-7'] }],
    );
  });
});
