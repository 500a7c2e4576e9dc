// Peer-fetch routing on real cluster members over the simulated network: a paused owner frees the
// requests waiting on it as soon as it is suspected, new requests skip it for the origin, and only the
// process's own hop token keeps a request where it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRandom } from '../../cluster/index.js';
import { SimCluster } from '../../sim/sim-cluster.js';
import { PeerRouting } from '../../src/clustering/peer-routing.js';

test('a paused owner: waits on it end when it is suspected, and new requests go to the origin', async () => {
  const cluster = new SimCluster({ nodes: 4, random: createRandom('routing') });
  await cluster.bootstrap(createRandom('routing-bootstrap'), 500);
  assert.notEqual(await cluster.waitFor(() => cluster.converged(4), 100, 30_000), null);
  const asker = cluster.member(0);
  const routing = new PeerRouting(asker, 60_000);
  const key = Array.from({ length: 100 }, (_, i) => `/k/${i}`).find((candidate) => asker.ring.owner(candidate) === 'node-0002')!;
  assert.deepEqual(routing.route(key, undefined), { kind: 'owner', owner: 'node-0002' });
  const wait = routing.watch('node-0002');
  let abortedAtMs: number | undefined;
  wait.signal.addEventListener('abort', () => (abortedAtMs = cluster.clock.now()));
  const pausedAtMs = cluster.clock.now();
  cluster.pause(2);
  await cluster.waitFor(() => abortedAtMs !== undefined, 50, 30_000);
  assert.ok(abortedAtMs !== undefined, 'the wait ended');
  assert.ok(abortedAtMs - pausedAtMs < 10_000, `ended when the owner was suspected, ${abortedAtMs - pausedAtMs} ms after the pause, not at the 60 s timeout`);
  assert.deepEqual(routing.route(key, undefined), { kind: 'origin', reason: 'owner_suspect' });
  wait.done();

  assert.deepEqual(routing.route(key, routing.hopToken), { kind: 'here' }, 'the own hop token keeps it here');
  assert.equal(routing.route(key, 'guessed').kind, 'origin', 'a client-set value does not');
  routing.close();
});
