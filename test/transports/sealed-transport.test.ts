// The sealed transport (cluster/security/): the conformance suite over sealed UDP, a sealed libp2p pair, then what sealing promises: forged, foreign-key and tampered packets, requests, answers
// and broadcasts are refused and counted, a handler learns who asked from the seal, and secrets rotate.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TransportError} from '../../cluster/index.js';
import { createRandom, sealTransport, type SealedTransport, type Transport } from '../../cluster/index.js';
import { SimNetwork } from '../../sim/sim-network.js';
import { transportConformance, type ConformanceFactory } from './conformance.js';
import { startUdpTransports, udpConformanceFactory } from './support/udp-network.js';
import { libp2pTestNodes } from './fixtures/libp2p-nodes.js';
import { eventually } from '../support/eventually.js';

const SECRET = Buffer.alloc(32, 0x5a);
const OTHER_SECRET = Buffer.alloc(32, 0xa5);

function sealed(factory: ConformanceFactory, secrets: Buffer[]): ConformanceFactory {
  return {
    ...factory,
    async create(count) {
      const network = await factory.create(count);
      return { ...network, transports: network.transports.map((transport) => sealTransport(transport, { secrets })) };
    },
  };
}

transportConformance('udp (sealed with a cluster secret)', sealed(udpConformanceFactory(), [SECRET]));

function simNetwork(count: number): { network: SimNetwork; transports: Transport[] } {
  const network = new SimNetwork({ random: createRandom(3), nativeBroadcast: true });
  const transports = Array.from({ length: count }, (_, i) => network.addNode(`10.0.0.${i + 1}:7946`).transport);
  return { network, transports };
}

async function run(network: SimNetwork, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 5) {
    await network.clock.runFor(5);
    // Not a wait on anything: a turn of the event loop between virtual steps, so that the work a step
    // queued (promise chains, immediates) runs before the next.
    await sleep(0);
  }
}

describe('sealed transport', () => {
  test('a packet, request or broadcast sealed with another secret, or not sealed, is refused and counted', async () => {
    const { network, transports } = simNetwork(3);
    const random = createRandom(9);
    const nonces = (target: Uint8Array): void => {
      for (let i = 0; i < target.length; i++) target[i] = random.int(256);
    };
    const member = sealTransport(transports[0]!, { secrets: [SECRET], nonces });
    const peer = sealTransport(transports[1]!, { secrets: [SECRET], nonces });
    const stranger = sealTransport(transports[2]!, { secrets: [OTHER_SECRET], nonces });
    const plain = transports[2]!;
    await Promise.all([member, peer, stranger].map((t) => t.start()));
    const packets: string[] = [];
    member.onPacket((_from, data) => packets.push(Buffer.from(data).toString()));
    const handled: string[] = [];
    member.onRequest('purge', async (from, body) => {
      handled.push(`${from}:${Buffer.from(body).toString()}`);
      return new Uint8Array([1]);
    });
    const broadcasts: string[] = [];
    member.broadcaster!.subscribe('topic', (_from, data) => broadcasts.push(Buffer.from(data).toString()));

    peer.sendPacket(member.localAddress, Buffer.from('from a member'));
    stranger.sendPacket(member.localAddress, Buffer.from('forged'));
    plain.sendPacket(member.localAddress, Buffer.from('cleartext'));
    const fromPeer = peer.request(member.localAddress, 'purge', Buffer.from('ok'), { timeoutMs: 1_000 });
    const fromStranger = stranger.request(member.localAddress, 'purge', Buffer.from('forged'), { timeoutMs: 1_000 });
    const inClear = plain.request(member.localAddress, 'purge', Buffer.from('cleartext'), { timeoutMs: 1_000 });
    for (const p of [fromStranger, inClear]) p.catch(() => undefined);
    await peer.broadcaster!.publish('topic', Buffer.from('announced'));
    await stranger.broadcaster!.publish('topic', Buffer.from('forged'));
    await run(network, 200);

    assert.deepEqual(packets, ['from a member']);
    assert.deepEqual([...(await fromPeer)], [1]);
    assert.deepEqual(handled, [`${peer.localAddress}:ok`], 'the handler hears the member, with the sender from the seal');
    await assert.rejects(fromStranger, (error: TransportError) => error.code === 'remote');
    await assert.rejects(inClear, (error: TransportError) => error.code === 'remote');
    assert.deepEqual(broadcasts, ['announced']);
    assert.deepEqual(member.counters().rejected, { packet: 2, request: 2, answer: 0, broadcast: 1 });
  });

  test('an answer that is not sealed for the request fails the request', async () => {
    const { network, transports } = simNetwork(2);
    const caller = sealTransport(transports[0]!, { secrets: [SECRET] });
    await caller.start();
    await transports[1]!.start();
    // A stranger at the peer's address answers in the clear.
    transports[1]!.onRequest('fetch', async () => Buffer.from('a forged object'));
    const asked = caller.request(transports[1]!.localAddress, 'fetch', Buffer.from('GET /'), { timeoutMs: 1_000 });
    asked.catch(() => undefined);
    await run(network, 50);
    await assert.rejects(asked, (error: TransportError) => error.code === 'remote');
    assert.equal((caller as SealedTransport).counters().rejected.answer, 1);
  });

  test('secrets rotate: the first seals, every one opens, so nodes with either order talk', async () => {
    const { network, transports } = simNetwork(2);
    const before = sealTransport(transports[0]!, { secrets: [SECRET, OTHER_SECRET] });
    const after = sealTransport(transports[1]!, { secrets: [OTHER_SECRET, SECRET] });
    await Promise.all([before.start(), after.start()]);
    const heard: string[] = [];
    before.onPacket((_from, data) => heard.push(`before:${Buffer.from(data).toString()}`));
    after.onPacket((_from, data) => heard.push(`after:${Buffer.from(data).toString()}`));
    before.sendPacket(after.localAddress, Buffer.from('old key'));
    after.sendPacket(before.localAddress, Buffer.from('new key'));
    await run(network, 50);
    assert.deepEqual(heard.sort(), ['after:old key', 'before:new key']);
  });

  test('over libp2p too: members exchange sealed traffic, a member with another secret is refused', async () => {
    const nodes = await libp2pTestNodes(3);
    try {
      await Promise.all(nodes.transports.map((t) => t.start()));
      const [member, peer, other] = [
        sealTransport(nodes.transports[0]!, { secrets: [SECRET] }),
        sealTransport(nodes.transports[1]!, { secrets: [SECRET] }),
        sealTransport(nodes.transports[2]!, { secrets: [OTHER_SECRET] }),
      ];
      member.onRequest('purge', async (from, body) => Buffer.from(`${from === peer.localAddress}:${Buffer.from(body).toString()}`));
      const answer = await peer.request(member.localAddress, 'purge', Buffer.from('ok'), { timeoutMs: 5_000 });
      assert.equal(Buffer.from(answer).toString(), 'true:ok');
      await assert.rejects(other.request(member.localAddress, 'purge', Buffer.from('forged'), { timeoutMs: 5_000 }), (error: TransportError) => error.code === 'remote');
      assert.equal(member.counters().rejected.request, 1);
    } finally {
      await nodes.cleanup();
    }
  });

  test('over UDP, a forged datagram and a forged POST /v1/peer/purge never reach the cluster code', async () => {
    const [inner] = await startUdpTransports(1);
    const transport = sealTransport(inner!, { secrets: [SECRET] });
    try {
      const packets: Uint8Array[] = [];
      transport.onPacket((_from, data) => packets.push(data));
      let handled = 0;
      transport.onRequest('purge', async () => {
        handled++;
        return new Uint8Array([1]);
      });
      const [host, port] = transport.localAddress.split(':') as [string, string];
      const socket = createSocket('udp4');
      await new Promise<void>((resolve) => socket.send(Buffer.from([1, 8, 4, 1, 2, 3, 4]), Number(port), host, () => resolve()));
      socket.close();
      const status = await new Promise<number>((resolve, reject) => {
        const post = httpRequest({ host, port: Number(port), method: 'POST', path: '/v1/peer/purge', headers: { 'content-type': 'application/octet-stream' } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        post.on('error', reject);
        post.end(Buffer.from([2, ...Buffer.from('{"id":"x","at":1,"type":"ban","path_regex":".*"}')]));
      });
      // The refused request was counted before its answer; the packet is counted once it is read.
      await eventually('the unsealed packet refused', () => transport.counters().rejected.packet, (refused) => refused >= 1);
      assert.notEqual(status, 200);
      assert.equal(handled, 0);
      assert.deepEqual(packets, []);
      assert.deepEqual(transport.counters().rejected, { packet: 1, request: 1, answer: 0, broadcast: 0 });
    } finally {
      await transport.stop();
    }
  });
});
