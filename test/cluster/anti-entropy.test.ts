// Push-pull anti-entropy beyond the member table: user broadcasts that gossip failed to deliver, the
// consumer's delegate state, and the reconnect loop that brings the two sides of a partition together.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FailedMembers } from '../../cluster/membership/failed-members.js';
import { RecentBroadcasts } from '../../cluster/gossip/recent-broadcasts.js';
import { createRandom } from '../../cluster/seeded-random.js';
import { converged, runUntil, simCluster } from './support/sim-cluster.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

describe('anti-entropy', () => {
  test('a broadcast that every gossip packet to one member lost arrives through push-pull', async () => {
    const cluster = await simCluster(5, { seed: 'anti-entropy', config: { pushPullIntervalMs: 2000 } });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const deaf = cluster.members.get('node-4')!;
    const received: string[] = [];
    deaf.onBroadcast((payload, origin) => received.push(`${origin}:${decoder.decode(payload)}`));
    // Every packet to node-4 is lost while the broadcast's gossip runs its course; requests still pass.
    for (const member of cluster.running()) {
      if (member !== deaf) cluster.network.setLink(member.localMember.address, 'node-4', { lossProbability: 1 });
    }
    cluster.members.get('node-1')!.broadcast(encoder.encode('purge /x'));
    await cluster.run(1500);
    for (const member of cluster.running()) {
      if (member !== deaf) cluster.network.setLink(member.localMember.address, 'node-4', { lossProbability: 0 });
    }
    assert.ok((await runUntil(cluster, () => received.length > 0, 20_000)) !== undefined, 'never recovered');
    await cluster.run(5000);
    assert.deepEqual(received, ['node-1:purge /x']);
    assert.equal(deaf.counters().userBroadcastsRecovered, 1);
  });

  test('the delegate state of each side reaches the other on join', async () => {
    const merged: { at: string; state: string; join: boolean }[] = [];
    const cluster = await simCluster(2, {
      seed: 'delegate',
      delegate: (name) => ({
        pushPullState: (join) => encoder.encode(`${name} bans${join ? ' (join)' : ''}`),
        mergeRemoteState: (state, join) => merged.push({ at: name, state: decoder.decode(state), join }),
      }),
    });
    await cluster.run(500);
    assert.deepEqual(merged.slice(0, 2).sort((a, b) => a.at.localeCompare(b.at)), [
      { at: 'node-0', state: 'node-1 bans (join)', join: true },
      { at: 'node-1', state: 'node-0 bans (join)', join: true },
    ]);
  });

  test('a delegate that throws is reported and the exchange goes on', async () => {
    const cluster = await simCluster(3, {
      seed: 'delegate-error',
      delegate: () => ({
        pushPullState: () => {
          throw new Error('broken state');
        },
        mergeRemoteState: () => undefined,
      }),
    });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()) && cluster.running().every((m) => m.peers().length === 2), 30_000)) !== undefined);
    assert.ok(cluster.running().every((member) => member.counters().listenerErrors > 0));
  });
});

describe('RecentBroadcasts', () => {
  test('answers a digest with what it lacks, bounded in count and age', () => {
    const recent = new RecentBroadcasts(2, 1000);
    recent.add('a', 1, Uint8Array.of(1), 0);
    recent.add('a', 2, Uint8Array.of(2), 10);
    recent.add('b', 1, Uint8Array.of(3), 20);
    assert.equal(recent.size, 2);
    assert.deepEqual(recent.missingFrom([{ origin: 'a', seq: 2 }]), [Uint8Array.of(3)]);
    assert.deepEqual(recent.digest(), [
      { origin: 'a', seq: 2 },
      { origin: 'b', seq: 1 },
    ]);
    recent.expire(1015);
    assert.deepEqual(recent.digest(), [{ origin: 'b', seq: 1 }]);
  });
});

describe('FailedMembers', () => {
  test('remembers failed members for reconnect, bounded in count and time', () => {
    const failed = new FailedMembers(2, 1000);
    failed.record('a', 'addr-a', 0);
    failed.record('b', 'addr-b', 10);
    failed.record('c', 'addr-c', 20);
    assert.equal(failed.size, 2);
    const random = createRandom(1);
    const picked = new Set<string>();
    for (let i = 0; i < 50; i++) picked.add(failed.pick(random)!.address);
    assert.deepEqual([...picked].sort(), ['addr-b', 'addr-c']);
    failed.forget('c');
    failed.expire(1010);
    assert.equal(failed.size, 0);
    assert.equal(failed.pick(random), undefined);
  });
});
