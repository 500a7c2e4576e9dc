// The cluster library's leases (cluster/lease.ts) on the deterministic simulator: a member holds its
// lease while a majority of the last known view answers it, loses it when cut off into a minority or
// paused, and regains it (told once) when a majority answers again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseKeeper, majorityOf } from '../../cluster/lease.js';
import { simCluster, converged } from './support/sim-cluster.js';

const LEASE_MS = 8_000;

async function leasedCluster(size: number) {
  const cluster = await simCluster(size, { seed: 'lease' });
  await cluster.run(20_000);
  assert.ok(converged(cluster.running()), 'the members agree on the table');
  const events = new Map<string, string[]>();
  const keepers = new Map<string, LeaseKeeper>();
  for (const [name, member] of cluster.members) {
    const seen: string[] = [];
    events.set(name, seen);
    const node = cluster.network.node(name);
    const keeper = new LeaseKeeper(member, { leaseMs: LEASE_MS, clock: node.clock, onLost: () => seen.push('lost'), onRegained: () => seen.push('regained') });
    keeper.start();
    keepers.set(name, keeper);
  }
  await cluster.run(LEASE_MS);
  return { cluster, keepers, events };
}

test('a majority is counted against the view, self included', () => {
  assert.deepEqual([0, 1, 2, 3, 4].map(majorityOf), [0, 1, 1, 2, 2]);
});

test('cut 3/2: the minority loses its lease within the lease time and the majority keeps it; healed, the minority regains it, told once', async () => {
  const { cluster, keepers, events } = await leasedCluster(5);
  const names = [...cluster.members.keys()];
  for (const keeper of keepers.values()) assert.ok(keeper.holds(), 'every member holds a lease in a healthy cluster');
  const minority = names.slice(3);
  cluster.network.partition(names.slice(0, 3), minority);
  const cutAt = cluster.network.clock.now();
  // The majority's bound on a cut-off member's lease: its last answer to that member, plus the lease.
  const bound = Math.max(...minority.map((name) => keepers.get('node-0')!.answeredAt(name))) + LEASE_MS;
  assert.ok(bound <= cutAt + LEASE_MS);
  await cluster.run(LEASE_MS);
  for (const name of minority) {
    assert.equal(keepers.get(name)!.holds(), false, `${name} holds no lease in the minority`);
    assert.ok(keepers.get(name)!.validUntil() <= bound, `${name}'s lease ended by the bound the majority computed`);
    assert.deepEqual(events.get(name), ['lost']);
  }
  for (const name of names.slice(0, 3)) assert.ok(keepers.get(name)!.holds(), `${name} keeps its lease in the majority`);
  cluster.network.heal();
  await cluster.run(LEASE_MS);
  for (const name of minority) {
    assert.ok(keepers.get(name)!.holds(), `${name} regains its lease`);
    assert.deepEqual(events.get(name), ['lost', 'regained']);
  }
  for (const keeper of keepers.values()) keeper.stop();
});

test('a paused member holds no lease the moment it resumes, and regains it once a majority answers', async () => {
  const { cluster, keepers, events } = await leasedCluster(3);
  cluster.network.pause('node-2');
  await cluster.run(LEASE_MS * 2);
  const keeper = keepers.get('node-2')!;
  assert.equal(keeper.holds(), false, 'time ran while it was paused: the lease has lapsed');
  cluster.network.resume('node-2');
  await cluster.run(LEASE_MS / 2);
  assert.ok(keeper.holds());
  assert.deepEqual(events.get('node-2'), ['lost', 'regained']);
  for (const each of keepers.values()) each.stop();
});

test('members that start alone and then join hold their lease throughout: the view growing takes none', async () => {
  const cluster = await simCluster(5, { seed: 'lease-join' });
  const lost: string[] = [];
  const keepers = [...cluster.members].map(([name, member]) => {
    const keeper = new LeaseKeeper(member, { leaseMs: LEASE_MS, clock: cluster.network.node(name).clock, onLost: () => lost.push(name) });
    keeper.start();
    return keeper;
  });
  await cluster.run(30_000);
  assert.ok(converged(cluster.running()));
  assert.deepEqual(lost, [], 'no member lost its lease while the others joined');
  for (const keeper of keepers) {
    assert.ok(keeper.holds());
    keeper.stop();
  }
});
