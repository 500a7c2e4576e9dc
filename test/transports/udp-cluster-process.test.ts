// Three OS processes run the cluster library over the UDP transport on 127.0.0.1 (issue 6 item 5):
// they form a cluster, declare a SIGKILLed member dead within the bound the fast profile gives, see it
// rejoin after a restart on the same port, and deliver broadcasts.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MEMBERSHIP_CONFIG, maxSuspicionTimeoutMs, minSuspicionTimeoutMs } from '../../cluster/index.js';
import { FAST_PROFILE } from './fixtures/fast-profile.js';
import { freeTcpAddress } from './support/udp-network.js';
import { MemberProcess, type MemberEvent } from './support/member-process.js';

const MEMBER_SCRIPT = fileURLToPath(new URL('./fixtures/udp-cluster-member.js', import.meta.url));
/** Room for process start-up and scheduling on a loaded CI machine, on top of the protocol's own bound. */
const SCHEDULING_SLACK_MS = 3000;

const running: MemberProcess[] = [];
after(async () => {
  await Promise.all(running.map((member) => member.kill('SIGKILL')));
});

/** A member's address: the same port for its UDP packets and its HTTP requests. */
const at = (port: number): string => `127.0.0.1:${port}`;

function startMember(name: string, port: number, seeds: string[]): MemberProcess {
  const member = new MemberProcess(MEMBER_SCRIPT, name, [String(port), ...seeds]);
  running.push(member);
  return member;
}

test('three processes over UDP: join, SIGKILL declared dead, rejoin after restart, broadcasts', { timeout: 30_000 }, async (context) => {
  const ports = await Promise.all([freeTcpAddress(), freeTcpAddress(), freeTcpAddress()]).then((addresses) =>
    addresses.map((address) => Number(address.split(':')[1])),
  );
  const [portA, portB, portC] = ports as [number, number, number];
  const startupMs = 10_000;
  const a = startMember('a', portA, []);
  await a.waitFor((event) => event.type === 'ready', startupMs, 'ready', true);
  const b = startMember('b', portB, [at(portA)]);
  const c = startMember('c', portC, [at(portA)]);
  const joinedOf = (observer: MemberProcess, name: string): Promise<MemberEvent> =>
    observer.waitFor((event) => event.type === 'join' && event.member === name, startupMs, `join of ${name}`, true);
  await Promise.all([joinedOf(a, 'b'), joinedOf(a, 'c'), joinedOf(b, 'a'), joinedOf(b, 'c'), joinedOf(c, 'a'), joinedOf(c, 'b')]);

  // A broadcast from one member reaches both others.
  b.send('broadcast hello from b');
  for (const receiver of [a, c]) {
    const event = await receiver.waitFor((e) => e.type === 'broadcast' && e.text === 'hello from b', 5000, 'broadcast', true);
    assert.equal(event.origin, 'b');
  }

  // SIGKILL c: a and b declare it dead within one probe round, a probe, and the longest suspicion.
  const config = { ...DEFAULT_MEMBERSHIP_CONFIG, ...FAST_PROFILE };
  const suspicionMaxMs = maxSuspicionTimeoutMs(config.suspicionMaxTimeoutMult, minSuspicionTimeoutMs(config.suspicionMult, 3, config.probeIntervalMs));
  const detectionBoundMs = 3 * config.probeIntervalMs + suspicionMaxMs + SCHEDULING_SLACK_MS;
  const killedAt = Date.now();
  const deathSeen = Promise.all([a, b].map((observer) => observer.waitFor((e) => e.type === 'fail' && e.member === 'c', detectionBoundMs, 'fail of c')));
  await c.kill('SIGKILL');
  // Each wait rejects past the bound, which is the assertion.
  await deathSeen;
  const detectedMs = Date.now() - killedAt;
  context.diagnostic(`c declared dead by both after ${detectedMs} ms (bound ${detectionBoundMs} ms)`);

  // Restarted on the same port with the same name, c is accepted again by both.
  const rejoined = Promise.all([a, b].map((observer) => observer.waitFor((e) => e.type === 'join' && e.member === 'c', startupMs, 'rejoin of c')));
  const c2 = startMember('c', portC, [at(portA), at(portB)]);
  await rejoined;
  c2.send('broadcast back again');
  for (const receiver of [a, b]) {
    const event = await receiver.waitFor((e) => e.type === 'broadcast' && e.text === 'back again', 5000, 'broadcast after restart', true);
    assert.equal(event.origin, 'c');
  }
});
