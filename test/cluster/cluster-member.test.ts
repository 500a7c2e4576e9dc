// The public API around the protocol: broadcasts, the ring, requests and fan-out.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BroadcastTooLargeError, MetadataTooLargeError, UnknownMemberError } from '../../cluster/errors.js';
import { createClusterMember } from '../../cluster/cluster-member.js';
import { createRandom } from '../../cluster/seeded-random.js';
import { SimNetwork } from '../../sim/sim-network.js';
import { SimCluster } from '../../sim/sim-cluster.js';
import { converged, runUntil, simCluster } from './support/sim-cluster.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

describe('cluster member API', () => {
  test('a user broadcast reaches every member exactly once', async () => {
    const cluster = await simCluster(12, { seed: 'broadcast' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const received = new Map<string, string[]>();
    for (const member of cluster.running()) {
      member.onBroadcast((payload, origin) => {
        const list = received.get(member.name) ?? [];
        list.push(`${origin}:${decoder.decode(payload)}`);
        received.set(member.name, list);
      });
    }
    cluster.members.get('node-3')!.broadcast(encoder.encode('purge /a'));
    cluster.members.get('node-8')!.broadcast(encoder.encode('purge /b'));
    await cluster.run(5000);
    for (const member of cluster.running()) {
      const got = (received.get(member.name) ?? []).sort();
      const expected = ['node-3:purge /a', 'node-8:purge /b'].filter((e) => !e.startsWith(`${member.name}:`));
      assert.deepEqual(got, expected, `at ${member.name}`);
    }
  });

  test('broadcasts that do not fit a packet and oversized metadata are refused', async () => {
    const network = new SimNetwork({ random: createRandom('limits') });
    const node = network.addNode('a');
    const member = createClusterMember({ name: 'a', transport: node.transport, clock: node.clock, random: node.random });
    assert.throws(() => member.broadcast(new Uint8Array(2000)), BroadcastTooLargeError);
    assert.throws(() => member.setMetadata({ blob: 'x'.repeat(600) }), MetadataTooLargeError);
    assert.throws(() => createClusterMember({ name: '', transport: node.transport }), TypeError);
    assert.throws(
      () => createClusterMember({ name: 'b', transport: node.transport, config: { probeTimeoutMs: 2000 } }),
      RangeError,
    );
  });

  test('every member agrees on key owners after convergence, and owners drop a dead member', async () => {
    const cluster = await simCluster(8, { seed: 'ring' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const keys = Array.from({ length: 50 }, (_, i) => `/item/${i}`);
    const reference = cluster.members.get('node-0')!;
    for (const member of cluster.running()) {
      assert.equal(member.ring.checksum, reference.ring.checksum);
      for (const key of keys) {
        assert.equal(member.ring.owner(key), reference.ring.owner(key));
        assert.deepEqual(member.ring.owners(key, 3), reference.ring.owners(key, 3));
      }
    }
    const owners = new Set(keys.map((key) => reference.ring.owner(key)));
    assert.ok(owners.size > 3, 'keys should spread over several members');
    assert.equal(new Set(reference.ring.owners('/x', 3)).size, 3);
    const versionBefore = reference.ring.version;
    cluster.crash('node-6');
    const others = cluster.running().filter((m) => m.name !== 'node-6');
    assert.ok((await runUntil(cluster, () => others.every((m) => m.member('node-6')?.state === 'dead'), 40_000)) !== undefined);
    assert.ok(reference.ring.version > versionBefore);
    for (const key of keys) assert.notEqual(reference.ring.owner(key), 'node-6');
    for (const member of others) assert.equal(member.ring.checksum, reference.ring.checksum);
  });

  test('ringMembers keeps members out of the ring by their metadata, and follows a change of it', async () => {
    const cluster = new SimCluster({
      nodes: 4,
      random: createRandom('ring-members'),
      memberOptions: (index) => ({ metadata: { role: index === 3 ? 'other' : 'cache' }, ringMembers: (member) => member.metadata.role === 'cache' }),
    });
    await cluster.bootstrap(createRandom('ring-members-bootstrap'), 500);
    assert.notEqual(await cluster.waitFor(() => cluster.converged(4), 100, 30_000), null);
    const reference = cluster.member(0);
    assert.deepEqual(reference.ring.members, ['node-0000', 'node-0001', 'node-0002']);
    for (let i = 0; i < 200; i++) assert.notEqual(reference.ring.owner(`/key/${i}`), 'node-0003');
    assert.equal(reference.peers().length, 3, 'still a member: it is only out of the ring');
    cluster.member(3).setMetadata({ role: 'cache' });
    assert.notEqual(await cluster.waitFor(() => reference.ring.members.length === 4, 100, 10_000), null, 'joins the ring once its metadata says so');
  });

  test('requests and fan-out report each member outcome', async () => {
    const cluster = await simCluster(5, { seed: 'fanout' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    for (const member of cluster.running()) {
      if (member.name === 'node-2') continue; // node-2 has no handler: its outcome is an error
      member.handleRequest('purge', async (_from, body) => encoder.encode(`${member.name} purged ${decoder.decode(body)}`));
    }
    const caller = cluster.members.get('node-0')!;
    const direct = caller.request('node-1', 'purge', encoder.encode('/a'), { timeoutMs: 1000 });
    await cluster.run(100);
    assert.equal(decoder.decode(await direct), 'node-1 purged /a');
    await assert.rejects(caller.request('nobody', 'purge', new Uint8Array(0), { timeoutMs: 100 }), UnknownMemberError);

    cluster.network.pause('node-3');
    const pending = caller.fanOut('purge', encoder.encode('/b'), { timeoutMs: 500 });
    await cluster.run(1000);
    const results = await pending;
    cluster.network.resume('node-3');
    const outcomes = Object.fromEntries(results.map((r) => [r.member.name, r.outcome]));
    assert.deepEqual(outcomes, { 'node-1': 'ok', 'node-2': 'error', 'node-3': 'timeout', 'node-4': 'ok' });
    const ok = results.find((r) => r.member.name === 'node-4');
    assert.equal(decoder.decode(ok?.body ?? new Uint8Array(0)), 'node-4 purged /b');
  });
});
