import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRandom } from '../../cluster/seeded-random.js';
import { TransportError } from '../../cluster/transport.js';
import { NodeStateError, PacketTooLargeError, UnknownAddressError } from '../../sim/errors.js';
import type { LinkOptions } from '../../sim/link.js';
import { SimNetwork, type SimNode } from '../../sim/sim-network.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Arrival {
  from: string;
  to: string;
  text: string;
  atMs: number;
}

/** A network of started nodes that record every packet they receive. */
async function recordingNetwork(
  addresses: string[],
  link: Partial<LinkOptions> = {},
  seed = 'network',
): Promise<{ network: SimNetwork; nodes: Map<string, SimNode>; arrivals: Arrival[] }> {
  const network = new SimNetwork({ random: createRandom(seed), link });
  const nodes = new Map<string, SimNode>();
  const arrivals: Arrival[] = [];
  for (const address of addresses) {
    const node = network.addNode(address);
    await listen(network, node, arrivals);
    nodes.set(address, node);
  }
  return { network, nodes, arrivals };
}

async function listen(network: SimNetwork, node: SimNode, arrivals: Arrival[]): Promise<void> {
  node.transport.onPacket((from, data) => {
    arrivals.push({ from, to: node.address, text: decoder.decode(data), atMs: network.clock.now() });
  });
  await node.transport.start();
}

function send(node: SimNode | undefined, to: string, text: string): void {
  assert.ok(node !== undefined);
  node.transport.sendPacket(to, encoder.encode(text));
}

async function rejection(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TransportError);
    return error;
  }
  assert.fail('the request resolved');
}

describe('SimNetwork packets', () => {
  test('delays every packet within the LAN latency bounds', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b']);
    for (let i = 0; i < 2000; i++) send(nodes.get('a'), 'b', String(i));
    await network.clock.runFor(10);
    assert.equal(arrivals.length, 2000);
    const delays = arrivals.map((arrival) => arrival.atMs);
    assert.ok(Math.min(...delays) >= 0.1);
    assert.ok(Math.max(...delays) <= 1);
    // A uniform draw over 0.1–1 ms averages 0.55 ms.
    const mean = delays.reduce((sum, delay) => sum + delay, 0) / delays.length;
    assert.ok(Math.abs(mean - 0.55) < 0.03, `mean delay ${mean}`);
  });

  test('loses and duplicates packets at the configured rates', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b'], {
      lossProbability: 0.1,
      duplicationProbability: 0.05,
    });
    const sent = 20000;
    for (let i = 0; i < sent; i++) send(nodes.get('a'), 'b', String(i));
    await network.clock.runFor(10);
    const stats = network.stats();
    assert.ok(Math.abs(stats.packetsLost / sent - 0.1) < 0.01, `loss ${stats.packetsLost / sent}`);
    const survivors = sent - stats.packetsLost;
    assert.ok(Math.abs(stats.packetsDuplicated / survivors - 0.05) < 0.01, `dup ${stats.packetsDuplicated}`);
    assert.equal(arrivals.length, survivors + stats.packetsDuplicated);
    assert.equal(new Set(arrivals.map((arrival) => arrival.text)).size, survivors);
  });

  test('reorders only packets given extra jitter', async () => {
    const fixed = { latency: { kind: 'fixed', ms: 1 } } as const;
    const steady = await recordingNetwork(['a', 'b'], fixed);
    const jittery = await recordingNetwork(['a', 'b'], { ...fixed, reorderProbability: 0.3, reorderJitterMs: 5 });
    for (const { network, nodes } of [steady, jittery]) {
      for (let i = 0; i < 500; i++) {
        send(nodes.get('a'), 'b', String(i));
        await network.clock.runFor(0.1);
      }
      await network.clock.runFor(20);
    }
    const outOfOrder = (arrivals: Arrival[]) =>
      arrivals.filter((arrival, i) => i > 0 && Number(arrival.text) < Number(arrivals[i - 1]!.text)).length;
    assert.equal(steady.arrivals.length, 500);
    assert.equal(outOfOrder(steady.arrivals), 0);
    assert.equal(jittery.arrivals.length, 500);
    assert.ok(outOfOrder(jittery.arrivals) > 20, `only ${outOfOrder(jittery.arrivals)} reordered`);
  });

  test('per-link options override the default for one direction only', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b']);
    network.setLink('a', 'b', { latency: { kind: 'fixed', ms: 50 } });
    send(nodes.get('a'), 'b', 'slow');
    send(nodes.get('b'), 'a', 'fast');
    await network.clock.runFor(100);
    assert.deepEqual(
      arrivals.map((arrival) => [arrival.text, arrival.atMs <= 1 ? 'lan' : arrival.atMs]),
      [
        ['fast', 'lan'],
        ['slow', 50],
      ],
    );
    network.clearLink('a', 'b');
    send(nodes.get('a'), 'b', 'lan again');
    await network.clock.runFor(1);
    assert.equal(arrivals.at(-1)?.text, 'lan again');
  });

  test('symmetric and asymmetric partitions block the right directions until healed', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b', 'c']);
    const exchange = async () => {
      arrivals.length = 0;
      for (const from of ['a', 'b', 'c']) {
        for (const to of ['a', 'b', 'c']) if (from !== to) send(nodes.get(from), to, `${from}>${to}`);
      }
      await network.clock.runFor(5);
      return arrivals.map((arrival) => arrival.text).sort();
    };
    network.partition(['a'], ['b', 'c']);
    assert.deepEqual(await exchange(), ['b>c', 'c>b']);
    network.heal();
    network.partition(['a'], ['b'], false);
    assert.deepEqual(await exchange(), ['a>c', 'b>a', 'b>c', 'c>a', 'c>b']);
    network.unblock('a', 'b');
    assert.equal((await exchange()).length, 6);
    assert.equal(network.stats().packetsBlocked, 5);
  });

  test('rejects a packet larger than one datagram loudly', async () => {
    const { nodes } = await recordingNetwork(['a', 'b']);
    const node = nodes.get('a');
    assert.ok(node !== undefined);
    node.transport.sendPacket('b', new Uint8Array(1400));
    assert.throws(() => node.transport.sendPacket('b', new Uint8Array(1401)), PacketTooLargeError);
  });

  test('copies packet bytes so a sender may reuse its buffer', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b']);
    const buffer = encoder.encode('first');
    nodes.get('a')?.transport.sendPacket('b', buffer);
    buffer.set(encoder.encode('xxxxx'));
    await network.clock.runFor(2);
    assert.equal(arrivals[0]?.text, 'first');
  });

  test('names unknown addresses in configuration calls', async () => {
    const { network } = await recordingNetwork(['a']);
    assert.throws(() => network.block('a', 'nowhere'), UnknownAddressError);
    assert.throws(() => network.crash('nowhere'), UnknownAddressError);
  });
});

describe('SimNetwork process faults', () => {
  test('a paused node fires its timers and reads its packets only on resume, in order', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b']);
    const b = nodes.get('b');
    assert.ok(b !== undefined);
    const timers: number[] = [];
    b.clock.setTimer(100, () => timers.push(b.clock.now()));
    const cleared = b.clock.setTimer(150, () => timers.push(-1));
    await network.clock.runUntil(50);
    network.pause('b');
    assert.equal(network.state('b'), 'paused');
    send(nodes.get('a'), 'b', 'during pause');
    await network.clock.runUntil(120);
    b.clock.clearTimer(cleared);
    await network.clock.runUntil(5050);
    assert.equal(timers.length, 0);
    assert.equal(arrivals.length, 0);
    network.resume('b');
    await network.clock.runFor(0);
    assert.deepEqual(timers, [5050]);
    assert.deepEqual(
      arrivals.map((arrival) => [arrival.text, arrival.atMs]),
      [['during pause', 5050]],
    );
    assert.throws(() => network.resume('b'), NodeStateError);
  });

  test('a crashed node stops its timers and traffic; a restart brings a fresh instance', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b']);
    const old = nodes.get('b');
    assert.ok(old !== undefined);
    const timers: string[] = [];
    old.clock.setTimer(10, () => timers.push('old'));
    network.crash('b');
    assert.equal(network.state('b'), 'crashed');
    send(nodes.get('a'), 'b', 'to the dead');
    send(old, 'a', 'from the dead');
    await network.clock.runFor(20);
    assert.equal(timers.length, 0);
    assert.equal(arrivals.length, 0);

    const fresh = network.restart('b');
    assert.equal(fresh.instance, 1);
    assert.equal(network.node('b'), fresh);
    await listen(network, fresh, arrivals);
    fresh.clock.setTimer(10, () => timers.push('fresh'));
    send(nodes.get('a'), 'b', 'to the living');
    await network.clock.runFor(20);
    assert.deepEqual(timers, ['fresh']);
    assert.deepEqual(
      arrivals.map((arrival) => arrival.text),
      ['to the living'],
    );
  });

  test('a crash while paused drops what the pause held', async () => {
    const { network, nodes, arrivals } = await recordingNetwork(['a', 'b']);
    network.pause('b');
    send(nodes.get('a'), 'b', 'held');
    await network.clock.runFor(5);
    network.crash('b');
    const fresh = network.restart('b');
    await listen(network, fresh, arrivals);
    await network.clock.runFor(5);
    assert.equal(arrivals.length, 0);
  });
});

describe('SimNetwork requests', () => {
  async function requestNetwork() {
    const network = new SimNetwork({ random: createRandom('requests') });
    const a = network.addNode('a');
    const b = network.addNode('b');
    await a.transport.start();
    await b.transport.start();
    b.transport.onRequest('echo', (from, body) => Promise.resolve(encoder.encode(`${from}:${decoder.decode(body)}`)));
    b.transport.onRequest('fail', () => Promise.reject(new Error('handler broke')));
    b.transport.onRequest('slow', (_from, body, signal) => {
      return new Promise((resolve, reject) => {
        const timer = b.clock.setTimer(1000, () => resolve(body));
        signal.addEventListener('abort', () => {
          b.clock.clearTimer(timer);
          reject(new Error('aborted'));
        });
      });
    });
    return { network, a, b };
  }

  test('answers within one round trip of LAN latency', async () => {
    const { network, a } = await requestNetwork();
    const answer = a.transport.request('b', 'echo', encoder.encode('hi'), { timeoutMs: 500 });
    let answeredAtMs = -1;
    void answer.then(() => (answeredAtMs = network.clock.now()));
    await network.clock.runFor(10);
    assert.equal(decoder.decode(await answer), 'a:hi');
    assert.ok(answeredAtMs >= 0.2 && answeredAtMs <= 2, `answered at ${answeredAtMs}`);
  });

  test('reports remote failures, refusals, timeouts and aborts with their codes', async () => {
    const { network, a, b } = await requestNetwork();
    const noHandler = rejection(a.transport.request('b', 'nothing', new Uint8Array(0), { timeoutMs: 500 }));
    const failing = rejection(a.transport.request('b', 'fail', new Uint8Array(0), { timeoutMs: 500 }));
    const absent = rejection(a.transport.request('nowhere', 'echo', new Uint8Array(0), { timeoutMs: 500 }));
    await network.clock.runFor(10);
    assert.equal((await noHandler).code, 'remote');
    assert.equal((await failing).code, 'remote');
    assert.equal((await absent).code, 'refused');

    const controller = new AbortController();
    const aborted = rejection(
      a.transport.request('b', 'slow', new Uint8Array(0), { timeoutMs: 5000, signal: controller.signal }),
    );
    await network.clock.runFor(10);
    controller.abort();
    assert.equal((await aborted).code, 'aborted');

    network.partition(['a'], ['b'], false);
    let timedOutAtMs = -1;
    const startMs = network.clock.now();
    const partitioned = rejection(a.transport.request('b', 'echo', new Uint8Array(0), { timeoutMs: 300 }));
    void partitioned.then(() => (timedOutAtMs = network.clock.now()));
    await network.clock.runFor(1000);
    assert.equal((await partitioned).code, 'timeout');
    assert.equal(timedOutAtMs - startMs, 300);
    network.heal();

    network.crash('b');
    const crashed = rejection(a.transport.request('b', 'echo', new Uint8Array(0), { timeoutMs: 500 }));
    await network.clock.runFor(10);
    assert.equal((await crashed).code, 'refused');
    assert.equal(b.transport.state, 'crashed');
  });

  test('a response lost to a one-way partition times out', async () => {
    const { network, a } = await requestNetwork();
    network.block('b', 'a');
    const answer = rejection(a.transport.request('b', 'echo', new Uint8Array(0), { timeoutMs: 200 }));
    await network.clock.runFor(500);
    assert.equal((await answer).code, 'timeout');
  });

  test('a paused callee answers after it resumes; stopping the caller fails with closed', async () => {
    const { network, a } = await requestNetwork();
    network.pause('b');
    const late = a.transport.request('b', 'echo', encoder.encode('late'), { timeoutMs: 5000 });
    await network.clock.runFor(1000);
    network.resume('b');
    await network.clock.runFor(10);
    assert.equal(decoder.decode(await late), 'a:late');

    const pending = rejection(a.transport.request('b', 'slow', new Uint8Array(0), { timeoutMs: 5000 }));
    await network.clock.runFor(10);
    await a.transport.stop();
    assert.equal((await pending).code, 'closed');
    assert.equal((await rejection(a.transport.request('b', 'echo', new Uint8Array(0), { timeoutMs: 5 }))).code, 'closed');
  });
});

describe('SimNetwork native broadcast', () => {
  test('reaches every other subscribed node and not a partitioned one', async () => {
    const network = new SimNetwork({ random: createRandom('broadcast'), nativeBroadcast: true });
    const received: string[] = [];
    const nodes = ['a', 'b', 'c', 'd'].map((address) => network.addNode(address));
    for (const node of nodes) {
      await node.transport.start();
      if (node.address !== 'd') {
        node.transport.broadcaster?.subscribe('news', (from, data) => {
          received.push(`${from}>${node.address}:${decoder.decode(data)}`);
        });
      }
    }
    network.block('a', 'c');
    await nodes[0]?.transport.broadcaster?.publish('news', encoder.encode('hello'));
    await network.clock.runFor(5);
    assert.deepEqual(received, ['a>b:hello']);
  });
});

describe('SimNetwork determinism', () => {
  /** A flood protocol: every node forwards a rumour it has not seen to three random peers. */
  async function floodTrace(seed: string): Promise<string[]> {
    const addresses = Array.from({ length: 30 }, (_, i) => `n${i}`);
    const network = new SimNetwork({
      random: createRandom(seed),
      link: { lossProbability: 0.2, duplicationProbability: 0.1, reorderProbability: 0.1, reorderJitterMs: 3 },
    });
    const trace: string[] = [];
    for (const address of addresses) {
      const node = network.addNode(address);
      const seen = new Set<string>();
      node.transport.onPacket((from, data) => {
        const rumour = decoder.decode(data);
        trace.push(`${network.clock.now().toFixed(6)} ${from}>${address} ${rumour}`);
        if (seen.has(rumour)) return;
        seen.add(rumour);
        for (let i = 0; i < 3; i++) node.transport.sendPacket(addresses[node.random.int(addresses.length)]!, data);
      });
      await node.transport.start();
    }
    for (let round = 0; round < 5; round++) {
      network.node('n0').transport.sendPacket('n1', encoder.encode(`rumour ${round}`));
      await network.clock.runFor(50);
    }
    return trace;
  }

  test('the same seed replays the same trace and another seed does not', async () => {
    const first = await floodTrace('seed-1');
    const second = await floodTrace('seed-1');
    const other = await floodTrace('seed-2');
    assert.ok(first.length > 100);
    assert.deepEqual(second, first);
    assert.notDeepEqual(other, first);
  });
});
