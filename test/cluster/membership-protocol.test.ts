// The membership protocol end to end: real members on the deterministic simulator.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodePushPull } from '../../cluster/codec/push-pull-codec.js';
import { PUSH_PULL_CHANNEL } from '../../cluster/membership/membership.js';
import { JoinAbortedError } from '../../cluster/errors.js';
import { converged, runUntil, simCluster, stateOf } from './support/sim-cluster.js';

describe('membership on the simulator', () => {
  for (const size of [5, 20]) {
    test(`${size} members converge to one checksum with everyone alive`, async () => {
      const cluster = await simCluster(size, { seed: `converge-${size}` });
      const took = await runUntil(cluster, () => converged(cluster.running()), 30_000);
      assert.ok(took !== undefined, 'the checksums never agreed');
      for (const member of cluster.running()) {
        const members = member.members();
        assert.equal(members.length, size);
        assert.ok(members.every((m) => m.state === 'alive'));
      }
    });
  }

  test('a crashed member is declared dead by every other member within the expected bound', async () => {
    const cluster = await simCluster(10, { seed: 'crash' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const failures: string[] = [];
    for (const member of cluster.running()) member.on('fail', (m) => failures.push(`${member.name}:${m.name}`));
    cluster.crash('node-7');
    // SWIM finds it in about 1.58 probe periods (several at most); Lifeguard's suspicion timeout at 10
    // members runs from 24 s down to 4 s with confirmations. 40 s covers detection plus the maximum.
    const took = await runUntil(cluster, () => cluster.running().every((m) => stateOf(m, 'node-7') === 'dead'), 40_000);
    assert.ok(took !== undefined, 'not every member declared node-7 dead');
    assert.equal(failures.length, 9);
    assert.ok(failures.every((entry) => entry.endsWith(':node-7')));
    assert.ok(converged(cluster.running()));
    assert.equal(cluster.running()[0]?.ring.members.includes('node-7'), false);
  });

  test('plain SWIM (Lifeguard off) also detects a crash, with the fixed minimum timeout', async () => {
    const cluster = await simCluster(10, { seed: 'swim', config: { lifeguard: false } });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    cluster.crash('node-3');
    const took = await runUntil(cluster, () => cluster.running().every((m) => stateOf(m, 'node-3') === 'dead'), 20_000);
    assert.ok(took !== undefined);
    for (const member of cluster.running()) assert.equal(member.counters().healthScore, 0);
  });

  test('a suspected member that is alive refutes with a higher incarnation', async () => {
    const cluster = await simCluster(8, { seed: 'refute' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const suspected: string[] = [];
    const failed: string[] = [];
    for (const member of cluster.running()) {
      member.on('suspect', (m) => suspected.push(m.name));
      member.on('fail', (m) => failed.push(m.name));
    }
    const others = cluster.running().map((m) => m.name).filter((name) => name !== 'node-5');
    // Cut node-5 off long enough to be suspected, far shorter than the suspicion timeout.
    cluster.network.partition(['node-5'], others);
    assert.ok((await runUntil(cluster, () => suspected.includes('node-5'), 10_000)) !== undefined);
    cluster.network.heal();
    const took = await runUntil(
      cluster,
      () => cluster.running().every((m) => stateOf(m, 'node-5') === 'alive') && converged(cluster.running()),
      20_000,
    );
    assert.ok(took !== undefined, 'node-5 was not seen alive again everywhere');
    assert.deepEqual(failed, []);
    const incarnation = cluster.members.get('node-5')?.localMember.incarnation ?? 0;
    assert.ok(incarnation >= 1);
    assert.ok((cluster.members.get('node-5')?.counters().refutations ?? 0) >= 1);
    for (const member of cluster.running()) assert.equal(member.member('node-5')?.incarnation, incarnation);
  });

  test('a graceful leave is seen as left, not failed', async () => {
    const cluster = await simCluster(6, { seed: 'leave' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const left: string[] = [];
    const failed: string[] = [];
    for (const member of cluster.running()) {
      member.on('leave', (m) => left.push(m.name));
      member.on('fail', (m) => failed.push(m.name));
    }
    const leaver = cluster.members.get('node-2');
    assert.ok(leaver !== undefined);
    const leaving = leaver.leave({ timeoutMs: 3000 });
    await cluster.run(3000);
    await leaving;
    await leaver.stop();
    const others = cluster.running().filter((m) => m !== leaver);
    const took = await runUntil(cluster, () => others.every((m) => stateOf(m, 'node-2') === 'left'), 5000);
    assert.ok(took !== undefined);
    assert.equal(left.filter((name) => name === 'node-2').length, 5);
    assert.deepEqual(failed, []);
  });

  test('a dead member is reaped but not revived by an old push-pull state', async () => {
    const cluster = await simCluster(5, { seed: 'revive' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const stale = encodePushPull({
      join: false,
      entries: cluster.members.get('node-0')!.members().map((m) => ({ ...m, rememberMs: 0 })),
      broadcastDigest: [],
      broadcasts: [],
      userState: new Uint8Array(0),
    });
    cluster.crash('node-4');
    const others = cluster.running().filter((m) => m.name !== 'node-4');
    assert.ok((await runUntil(cluster, () => others.every((m) => stateOf(m, 'node-4') === 'dead'), 40_000)) !== undefined);
    // gossipToTheDeadTime (30 s) later the dead member leaves the table.
    assert.ok((await runUntil(cluster, () => others.every((m) => m.member('node-4') === undefined), 40_000)) !== undefined);
    const joins: string[] = [];
    for (const member of others) member.on('join', (m) => joins.push(m.name));
    // A peer that slept through the death offers its old view, with node-4 alive at its old incarnation.
    const sleeper = cluster.network.addNode('sleeper');
    await sleeper.transport.start();
    await Promise.all([
      sleeper.transport.request('node-1', PUSH_PULL_CHANNEL, stale, { timeoutMs: 5000 }),
      cluster.run(1000),
    ]);
    await cluster.run(5000);
    assert.deepEqual(joins, []);
    for (const member of others) assert.equal(member.member('node-4'), undefined);
    assert.ok((cluster.members.get('node-1')?.counters().tombstones ?? 0) >= 1);
  });

  test('a restarted member refutes its old death and comes back', async () => {
    const cluster = await simCluster(5, { seed: 'restart' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    cluster.crash('node-3');
    const others = cluster.running().filter((m) => m.name !== 'node-3');
    assert.ok((await runUntil(cluster, () => others.every((m) => stateOf(m, 'node-3') === 'dead'), 40_000)) !== undefined);
    const node = cluster.network.restart('node-3');
    const { createClusterMember } = await import('../../cluster/cluster-member.js');
    const reborn = createClusterMember({ name: 'node-3', transport: node.transport, clock: node.clock, random: node.random });
    await reborn.start();
    const joined = reborn.join(['node-0']);
    await cluster.run(2000);
    assert.ok((await joined) >= 1);
    const took = await runUntil(cluster, () => others.every((m) => stateOf(m, 'node-3') === 'alive'), 20_000);
    assert.ok(took !== undefined, 'the restarted member was not accepted');
    assert.ok(reborn.localMember.incarnation >= 1);
  });

  test('join retries with back-off until a seed answers, telling of each round none answered, and stops when aborted', async () => {
    const cluster = await simCluster(1, { seed: 'join-retry' });
    const early = await cluster.add('early');
    const unanswered: number[] = [];
    const joined = early.join(['late-seed'], { onUnanswered: (round) => unanswered.push(round) });
    await cluster.run(5000);
    // Rounds at about 0, 1 and 3 s (back-off 1 s, then 2 s); the next is due at 7 s.
    assert.deepEqual(unanswered, [1, 2, 3]);
    const seed = await cluster.add('late-seed');
    await cluster.run(20_000);
    assert.equal(await joined, 1);
    assert.deepEqual(unanswered, [1, 2, 3], 'the round that reached the seed is not one');
    assert.equal(seed.member('early')?.state, 'alive');

    const lonely = await cluster.add('lonely');
    const controller = new AbortController();
    const attempt = lonely.join(['nobody-here'], { signal: controller.signal });
    await cluster.run(3000);
    controller.abort();
    await assert.rejects(attempt, JoinAbortedError);
  });

  test('metadata updates reach every member with a bumped incarnation', async () => {
    const cluster = await simCluster(6, { seed: 'metadata' });
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    const updates: string[] = [];
    for (const member of cluster.running()) member.on('update', (m) => updates.push(`${member.name}:${m.name}`));
    cluster.members.get('node-1')!.setMetadata({ mode: 'eventual', admin: '127.0.0.1:9000' });
    const took = await runUntil(
      cluster,
      () => cluster.running().every((m) => m.member('node-1')?.metadata.mode === 'eventual'),
      10_000,
    );
    assert.ok(took !== undefined);
    assert.equal(cluster.members.get('node-0')!.member('node-1')?.incarnation, 1);
    assert.ok(updates.length >= 6);
  });

  test('the same seed replays the same run', async () => {
    const fingerprints: string[] = [];
    for (let run = 0; run < 2; run++) {
      const cluster = await simCluster(8, { seed: 'replay' });
      await cluster.run(15_000);
      cluster.crash('node-4');
      await cluster.run(20_000);
      fingerprints.push(
        JSON.stringify(cluster.running().map((m) => [m.checksum(), m.counters(), m.members().map((x) => x.state)])),
      );
    }
    assert.equal(fingerprints[0], fingerprints[1]);
  });

  test('garbage packets are counted and dropped without disturbing the member', async () => {
    const cluster = await simCluster(3, { seed: 'garbage' });
    const noise = cluster.network.addNode('noise');
    await noise.transport.start();
    noise.transport.sendPacket('node-1', new Uint8Array([1, 250, 250, 250]));
    noise.transport.sendPacket('node-1', new Uint8Array([99, 1, 2]));
    noise.transport.sendPacket('node-1', new Uint8Array(0));
    assert.ok((await runUntil(cluster, () => converged(cluster.running()), 30_000)) !== undefined);
    assert.equal(cluster.members.get('node-1')?.counters().malformedInputs, 3);
  });
});
