// The cluster-kv example (examples/cluster-kv): three nodes in one process over real UDP and HTTP on
// 127.0.0.1; a value written on one node is read on every other, whichever member owns the key.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KvNode } from '../../examples/cluster-kv/kv-node.js';
import { FAST_PROFILE } from './fixtures/fast-profile.js';
import { eventually } from '../support/eventually.js';

const FORMATION_BUDGET_MS = 10_000;

test('a value written on one node is read on the others', { timeout: 30_000 }, async () => {
  const nodes = ['a', 'b', 'c'].map((name) => new KvNode({ name, bind: '127.0.0.1:0', membership: FAST_PROFILE }));
  const [a, b, c] = nodes as [KvNode, KvNode, KvNode];
  try {
    await a.start();
    await Promise.all([b.start([a.address]), c.start([a.address])]);
    await eventually('every node sees three owners', () => nodes.map((node) => node.member.ring.members.length), (owners) => owners.every((count) => count === 3), {
      timeoutMs: FORMATION_BUDGET_MS,
      everyMs: 20,
    });

    const keys = Array.from({ length: 30 }, (_, i) => `key-${i}`);
    const owners = new Set(keys.map((key) => a.ownerOf(key)));
    assert.equal(owners.size, 3, 'the keys spread over all three members');
    for (const [index, key] of keys.entries()) await nodes[index % 3]!.set(key, `value ${index}`);
    for (const node of nodes) {
      for (const [index, key] of keys.entries()) assert.equal(await node.get(key), `value ${index}`, `${key} read on ${node.member.name}`);
      assert.equal(await node.get('never-written'), null);
    }
    // Forwarded, not replicated: each value is held by its owner only.
    await b.set('colour', 'blue');
    assert.equal(await c.get('colour'), 'blue');
  } finally {
    await Promise.all(nodes.map((node) => node.stop()));
  }
});
