// Three OS processes run the cluster library over the UDP transport on 127.0.0.1 (issue 6 item 5):
// they form a cluster, declare a SIGKILLed member dead within the bound the fast profile gives, see it
// rejoin after a restart on the same port, and deliver broadcasts.

import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MEMBERSHIP_CONFIG, maxSuspicionTimeoutMs, minSuspicionTimeoutMs } from '../../cluster/index.js';
import { FAST_PROFILE } from './fixtures/fast-profile.js';
import { freeTcpAddress } from './support/udp-network.js';

const MEMBER_SCRIPT = fileURLToPath(new URL('./fixtures/udp-cluster-member.js', import.meta.url));
/** Room for process start-up and scheduling on a loaded CI machine, on top of the protocol's own bound. */
const SCHEDULING_SLACK_MS = 3000;

interface MemberEvent {
  type: string;
  member?: string;
  origin?: string;
  text?: string;
  address?: string;
}

class MemberProcess {
  readonly events: MemberEvent[] = [];
  private waiters: { match: (event: MemberEvent) => boolean; resolve: (event: MemberEvent) => void }[] = [];
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly port: number,
    seeds: string[],
  ) {
    this.child = spawn(process.execPath, [MEMBER_SCRIPT, name, String(port), ...seeds], { stdio: 'pipe' });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.stderr.on('data', (chunk: Buffer) => process.stderr.write(`[${name}] ${chunk.toString()}`));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const event = JSON.parse(line) as MemberEvent;
      this.events.push(event);
      for (const waiter of [...this.waiters]) {
        if (!waiter.match(event)) continue;
        this.waiters = this.waiters.filter((other) => other !== waiter);
        waiter.resolve(event);
      }
    });
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The first event from now on (or already seen, when `seen` allows) that matches, within `timeoutMs`. */
  waitFor(match: (event: MemberEvent) => boolean, timeoutMs: number, what: string, seen = false): Promise<MemberEvent> {
    const earlier = seen ? this.events.find(match) : undefined;
    if (earlier !== undefined) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no ${what} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      });
    });
  }

  send(command: string): void {
    this.child.stdin.write(`${command}\n`);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}

const running: MemberProcess[] = [];
after(async () => {
  await Promise.all(running.map((member) => member.kill('SIGKILL')));
});

function startMember(name: string, port: number, seeds: string[]): MemberProcess {
  const member = new MemberProcess(name, port, seeds);
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
  const b = startMember('b', portB, [a.address]);
  const c = startMember('c', portC, [a.address]);
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
  const c2 = startMember('c', portC, [a.address, b.address]);
  await rejoined;
  c2.send('broadcast back again');
  for (const receiver of [a, b]) {
    const event = await receiver.waitFor((e) => e.type === 'broadcast' && e.text === 'back again', 5000, 'broadcast after restart', true);
    assert.equal(event.origin, 'c');
  }
});
