// Three OS processes run the cluster library over the libp2p transport on 127.0.0.1 (issue 6 item 5):
// they form a cluster, declare a SIGKILLed member dead within the bound the fast profile gives, see it
// rejoin after a restart with the same key file (so the same peer id and address), and deliver
// broadcasts both through the cluster's gossip and through the transport's gossipsub topic.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MEMBERSHIP_CONFIG, maxSuspicionTimeoutMs, minSuspicionTimeoutMs } from '../../cluster/index.js';
import { loadOrCreateNodeKey } from '../../transports/libp2p/index.js';
import { FAST_PROFILE } from './fixtures/fast-profile.js';
import { MemberProcess, type MemberEvent } from './support/member-process.js';
import { freePort } from '../../bench/support/free-port.js';

const MEMBER_SCRIPT = fileURLToPath(new URL('./fixtures/libp2p-cluster-member.js', import.meta.url));
/** Room for process start-up and scheduling on a loaded CI machine, on top of the protocol's own bound. */
const SCHEDULING_SLACK_MS = 3000;
const STARTUP_MS = 10_000;

/** The member's ready event, which carries its address. */
const ready = (member: MemberProcess): Promise<MemberEvent> => member.waitFor((event) => event.type === 'ready', STARTUP_MS, 'ready', true);

const running: MemberProcess[] = [];
let root: string | undefined;
after(async () => {
  await Promise.all(running.map((member) => member.kill('SIGKILL')));
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/**
 * Publishes `text` on the gossipsub topic every 500 ms until every receiver has it. Gossipsub forwards
 * only to peers whose subscription it has heard, and members connect to each other as SWIM probes them,
 * so a message published while a member is still joining the mesh can miss it (docs/libp2p.md).
 */
function publishUntilDelivered(publisher: MemberProcess, text: string, receivers: MemberProcess[]): () => void {
  const delivered = (): boolean => receivers.every((receiver) => receiver.events.some((e) => e.type === 'pubsub' && e.text === text));
  publisher.send(`publish ${text}`);
  const timer = setInterval(() => {
    if (!delivered()) publisher.send(`publish ${text}`);
  }, 500);
  // A failed assertion must not leave the test process waiting on this timer.
  timer.unref();
  return () => clearInterval(timer);
}

test('three processes over libp2p: join, SIGKILL declared dead, rejoin after restart, broadcasts', { timeout: 40_000 }, async (context) => {
  root = await mkdtemp(join(tmpdir(), 'svc-libp2p-cluster-'));
  const names = ['a', 'b', 'c'] as const;
  const dataDirs = names.map((name) => join(root!, name));
  // Keys first: every member's allowlist names the three peer ids.
  const peerIds = await Promise.all(dataDirs.map(async (dir) => (await loadOrCreateNodeKey(dir)).peerId));
  const ports = await Promise.all(names.map(() => freePort()));
  const argsOf = (index: number, seeds: string[]): string[] => [dataDirs[index]!, String(ports[index]), peerIds.join(','), ...seeds];
  const startMember = (index: number, seeds: string[]): MemberProcess => {
    const member = new MemberProcess(MEMBER_SCRIPT, names[index]!, argsOf(index, seeds));
    running.push(member);
    return member;
  };

  const a = startMember(0, []);
  const readyA = await ready(a);
  assert.equal(readyA.peerId, peerIds[0]);
  // Seeds written host:port, as in cluster.join: the peer id comes from the noise handshake.
  const b = startMember(1, [`127.0.0.1:${ports[0]}`]);
  const c = startMember(2, [`127.0.0.1:${ports[0]}`]);
  const readyC = await ready(c);
  const joinedOf = (observer: MemberProcess, name: string): Promise<MemberEvent> =>
    observer.waitFor((event) => event.type === 'join' && event.member === name, STARTUP_MS, `join of ${name}`, true);
  await Promise.all([joinedOf(a, 'b'), joinedOf(a, 'c'), joinedOf(b, 'a'), joinedOf(b, 'c'), joinedOf(c, 'a'), joinedOf(c, 'b')]);
  assert.equal((await joinedOf(b, 'c')).address, readyC.address, 'members know each other by multiaddr with peer id');

  // A cluster broadcast (gossip over libp2p packet streams) and a gossipsub publish reach both others.
  b.send('broadcast hello from b');
  const stopPublishing = publishUntilDelivered(b, 'pubsub from b', [a, c]);
  const readyB = await ready(b);
  for (const receiver of [a, c]) {
    const gossip = await receiver.waitFor((e) => e.type === 'broadcast' && e.text === 'hello from b', 5000, 'broadcast', true);
    assert.equal(gossip.origin, 'b');
    const pubsub = await receiver.waitFor((e) => e.type === 'pubsub' && e.text === 'pubsub from b', 5000, 'gossipsub message', true);
    assert.equal(pubsub.from, readyB.address);
  }
  stopPublishing();

  // SIGKILL c: a and b declare it dead within one probe round, a probe, and the longest suspicion.
  const config = { ...DEFAULT_MEMBERSHIP_CONFIG, ...FAST_PROFILE };
  const suspicionMaxMs = maxSuspicionTimeoutMs(config.suspicionMaxTimeoutMult, minSuspicionTimeoutMs(config.suspicionMult, 3, config.probeIntervalMs));
  const detectionBoundMs = 3 * config.probeIntervalMs + suspicionMaxMs + SCHEDULING_SLACK_MS;
  const killedAt = Date.now();
  const deathSeen = Promise.all([a, b].map((observer) => observer.waitFor((e) => e.type === 'fail' && e.member === 'c', detectionBoundMs, 'fail of c')));
  await c.kill('SIGKILL');
  // Each wait rejects past the bound, which is the assertion.
  await deathSeen;
  context.diagnostic(`c declared dead by both after ${Date.now() - killedAt} ms (bound ${detectionBoundMs} ms)`);

  // Restarted with the same data directory and port, c has the same peer id and address and is accepted again.
  const rejoined = Promise.all([a, b].map((observer) => observer.waitFor((e) => e.type === 'join' && e.member === 'c', STARTUP_MS, 'rejoin of c')));
  const restartedAt = Date.now();
  const c2 = startMember(2, [readyA.address!, readyB.address!]);
  const readyC2 = await ready(c2);
  assert.equal(readyC2.peerId, peerIds[2]);
  assert.equal(readyC2.address, readyC.address);
  await rejoined;
  context.diagnostic(`c accepted again by both ${Date.now() - restartedAt} ms after its restart`);
  c2.send('broadcast back again');
  const stopRepublishing = publishUntilDelivered(c2, 'pubsub back again', [a, b]);
  for (const receiver of [a, b]) {
    const gossip = await receiver.waitFor((e) => e.type === 'broadcast' && e.text === 'back again', 5000, 'broadcast after restart', true);
    assert.equal(gossip.origin, 'c');
    const pubsub = await receiver.waitFor((e) => e.type === 'pubsub' && e.text === 'pubsub back again', 5000, 'gossipsub message after restart', true);
    assert.equal(pubsub.from, readyC2.address);
  }
  stopRepublishing();
});
