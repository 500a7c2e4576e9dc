// What protects the UDP transport's traffic: sealed packets (AES-256-GCM keyring with rotation),
// mutual TLS on the request path (a peer without a certificate from the cluster CA is refused, in
// both directions), the handler's own check when an embedding server mounts it, and body bounds.

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { Client } from 'undici';
import { TransportError } from '../../cluster/transport.js';
import {
  createUdpTransport,
  decodeGossipKeys,
  DEFAULT_MAX_DATAGRAM_BYTES,
  InvalidAddressError,
  InvalidGossipKeyError,
  PacketKeyring,
  SEAL_OVERHEAD_BYTES,
  type UdpTransport,
} from '../../transports/udp/index.js';
import { eventually } from '../support/eventually.js';
import { clusterTls, intruderTls, startUdpTransports, TEST_GOSSIP_KEYS } from './support/udp-network.js';

const [KEY_1, KEY_2, KEY_3] = TEST_GOSSIP_KEYS;
const TIMEOUT_MS = 5000;

async function stopAll(transports: readonly UdpTransport[]): Promise<void> {
  await Promise.all(transports.map((transport) => transport.stop()));
}

async function requestCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TransportError, String(error));
    return error.code;
  }
  return 'ok';
}

/** Sends a packet from `from` to `to` and waits until it arrives. */
async function untilPacketArrives(from: UdpTransport, to: UdpTransport): Promise<void> {
  let arrived = 0;
  to.onPacket(() => arrived++);
  from.sendPacket(to.localAddress, Uint8Array.of(1, 2, 3));
  await eventually(`a packet from ${from.localAddress} at ${to.localAddress}`, () => arrived, (count) => count > 0);
}

/**
 * Sends `count` packets from `from` to `to`, waits until `to` has rejected them all (each one seen
 * and refused, so none can still arrive), and resolves with how many arrived.
 */
async function packetsArrivingOfRejected(from: UdpTransport, to: UdpTransport, count: number): Promise<number> {
  let arrived = 0;
  to.onPacket(() => arrived++);
  const rejectedBefore = to.counters().packetsRejected;
  for (let i = 0; i < count; i++) from.sendPacket(to.localAddress, Uint8Array.of(1, 2, 3));
  await eventually(`${count} packets rejected at ${to.localAddress}`, () => to.counters().packetsRejected - rejectedBefore, (rejected) => rejected >= count);
  return arrived;
}

describe('packet keyring', () => {
  test('seals and opens; a changed byte, another key or another version does not open', () => {
    const sealer = new PacketKeyring([KEY_1]);
    const plaintext = Buffer.from('ping 42');
    const sealed = sealer.seal(plaintext);
    assert.equal(sealed.byteLength, plaintext.byteLength + SEAL_OVERHEAD_BYTES);
    assert.ok(!sealed.includes(plaintext), 'the plaintext is not visible in the sealed packet');
    assert.deepEqual(sealer.open(sealed), plaintext);
    assert.notDeepEqual(sealer.seal(plaintext), sealed, 'every packet gets a fresh nonce');
    for (const index of [0, 5, sealed.byteLength - 1]) {
      const tampered = Buffer.from(sealed);
      tampered[index]! ^= 1;
      assert.equal(sealer.open(tampered), null, `byte ${index} changed`);
    }
    assert.equal(new PacketKeyring([KEY_2]).open(sealed), null);
    assert.equal(sealer.open(sealed.subarray(0, SEAL_OVERHEAD_BYTES - 1)), null);
  });

  test('rotation: the primary key seals, every key opens', () => {
    const old = new PacketKeyring([KEY_1]);
    const rotating = new PacketKeyring([KEY_2, KEY_1]);
    assert.deepEqual(rotating.open(old.seal(Buffer.from('a'))), Buffer.from('a'));
    assert.equal(old.open(rotating.seal(Buffer.from('b'))), null, 'sealed with the new primary key');
    assert.deepEqual(new PacketKeyring([KEY_1, KEY_2]).open(rotating.seal(Buffer.from('c'))), Buffer.from('c'));
  });

  test('a key of the wrong length is refused without showing its bytes', () => {
    const short = Buffer.from('secret-key-material');
    assert.throws(() => new PacketKeyring([KEY_1, short]), (error: unknown) => {
      assert.ok(error instanceof InvalidGossipKeyError);
      assert.equal(error.index, 1);
      assert.ok(!error.message.includes('secret'), error.message);
      return true;
    });
    assert.deepEqual(decodeGossipKeys([KEY_1.toString('base64')]), [KEY_1]);
    assert.throws(() => decodeGossipKeys([short.toString('base64')]), (error: unknown) => {
      assert.ok(error instanceof InvalidGossipKeyError);
      assert.ok(!error.message.includes(short.toString('base64')), error.message);
      return true;
    });
  });
});

describe('sealed packets between transports', () => {
  test('the packet limit leaves room for the seal', async () => {
    const [plain] = await startUdpTransports(1);
    const [sealed] = await startUdpTransports(1, { gossipKeys: [KEY_1] });
    try {
      assert.equal(plain!.maxPacketBytes, DEFAULT_MAX_DATAGRAM_BYTES);
      assert.equal(sealed!.maxPacketBytes, DEFAULT_MAX_DATAGRAM_BYTES - SEAL_OVERHEAD_BYTES);
      assert.deepEqual(sealed!.security, { packetsSealed: true, requestsMutualTls: false });
    } finally {
      await stopAll([plain!, sealed!]);
    }
  });

  test('packets sealed with an unknown key, or in the clear, are dropped and counted', async () => {
    const [a] = await startUdpTransports(1, { gossipKeys: [KEY_1] });
    const [b] = await startUdpTransports(1, { gossipKeys: [KEY_3] });
    const [clear] = await startUdpTransports(1);
    try {
      assert.equal(await packetsArrivingOfRejected(a!, b!, 5), 0);
      assert.equal(await packetsArrivingOfRejected(clear!, b!, 3), 0);
      assert.equal(b!.counters().packetsRejected, 8);
      // A raw datagram that merely looks sealed is rejected too.
      const raw = createSocket('udp4');
      const port = Number(b!.localAddress.split(':')[1]);
      await new Promise<void>((resolve) => raw.send(Buffer.alloc(100, 1), port, '127.0.0.1', () => resolve()));
      await eventually('the raw datagram rejected', () => b!.counters().packetsRejected, (rejected) => rejected >= 9);
      raw.close();
      assert.equal(b!.counters().packetsRejected, 9);
      assert.equal(b!.counters().packetsReceived, 0);
    } finally {
      await stopAll([a!, b!, clear!]);
    }
  });

  test('during a rotation, members with either primary key understand each other', async () => {
    const [a] = await startUdpTransports(1, { gossipKeys: [KEY_1, KEY_2] });
    const [b] = await startUdpTransports(1, { gossipKeys: [KEY_2, KEY_1] });
    try {
      await untilPacketArrives(a!, b!);
      await untilPacketArrives(b!, a!);
    } finally {
      await stopAll([a!, b!]);
    }
  });
});

describe('mutual TLS on the request path', () => {
  test('a peer with a certificate from another CA is refused, in both directions', async () => {
    const members = await startUdpTransports(1, { tls: clusterTls() });
    const intruders = await startUdpTransports(1, { tls: intruderTls() });
    const [member, intruder] = [members[0]!, intruders[0]!];
    let served = 0;
    for (const transport of [member, intruder]) {
      transport.onRequest('echo', (_from, body) => {
        served++;
        return Promise.resolve(body);
      });
    }
    try {
      assert.equal(await requestCode(intruder.request(member.localAddress, 'echo', Uint8Array.of(1), { timeoutMs: TIMEOUT_MS })), 'refused');
      assert.equal(await requestCode(member.request(intruder.localAddress, 'echo', Uint8Array.of(1), { timeoutMs: TIMEOUT_MS })), 'refused');
      assert.equal(served, 0);
    } finally {
      await stopAll([member, intruder]);
    }
  });

  test('a client without any certificate gets no answer from the handler', async () => {
    const [member] = await startUdpTransports(1, { tls: clusterTls() });
    member!.onRequest('echo', (_from, body) => Promise.resolve(body));
    const client = new Client(`https://${member!.localAddress}`, { connect: { ca: clusterTls().ca, rejectUnauthorized: true } });
    try {
      await assert.rejects(client.request({ path: '/v1/peer/echo', method: 'POST', body: 'x' }));
    } finally {
      await client.destroy();
      await member!.stop();
    }
  });

  test('mounted in another server, the handler serves only sockets with a verified cluster certificate', async () => {
    const [member] = await startUdpTransports(1, { tls: clusterTls(), listenHttp: false });
    member!.onRequest('echo', (_from, body) => Promise.resolve(body));
    const tls = clusterTls();
    // What svc's admin server must do: ask for a client certificate and verify it against the cluster
    // CA, without rejecting connections that have none (operators' admin clients), and let the handler
    // refuse the unverified ones.
    const admin = createHttpsServer({ cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: false }, member!.handler);
    const plain = createHttpServer(member!.handler);
    const servers: Server[] = [admin, plain];
    for (const server of servers) server.listen(0, '127.0.0.1');
    await Promise.all(servers.map((server) => once(server, 'listening')));
    const port = (server: Server): number => (server.address() as { port: number }).port;
    const withCert = new Client(`https://127.0.0.1:${port(admin)}`, { connect: { cert: tls.cert, key: tls.key, ca: tls.ca, checkServerIdentity: () => undefined } });
    const withoutCert = new Client(`https://127.0.0.1:${port(admin)}`, { connect: { ca: tls.ca, checkServerIdentity: () => undefined } });
    const intruder = intruderTls();
    const withIntruderCert = new Client(`https://127.0.0.1:${port(admin)}`, {
      connect: { cert: intruder.cert, key: intruder.key, ca: tls.ca, checkServerIdentity: () => undefined },
    });
    const overPlainHttp = new Client(`http://127.0.0.1:${port(plain)}`);
    const clients = [withCert, withoutCert, withIntruderCert, overPlainHttp];
    try {
      const status = async (client: Client): Promise<number> => {
        const response = await client.request({ path: '/v1/peer/echo', method: 'POST', body: 'hi' });
        await response.body.dump();
        return response.statusCode;
      };
      assert.equal(await status(withCert), 200);
      assert.equal(await status(withoutCert), 403);
      assert.equal(await status(withIntruderCert), 403);
      assert.equal(await status(overPlainHttp), 403);
    } finally {
      await Promise.all(clients.map((client) => client.destroy()));
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      await member!.stop();
    }
  });
});

describe('bounds and configuration', () => {
  test('a request body above maxRequestBodyBytes is refused with 413 before the handler runs', async () => {
    const transports = await startUdpTransports(2, { maxRequestBodyBytes: 1024 });
    const [a, b] = transports;
    let served = 0;
    b!.onRequest('echo', (_from, body) => {
      served++;
      return Promise.resolve(body);
    });
    try {
      await a!.request(b!.localAddress, 'echo', new Uint8Array(1024), { timeoutMs: TIMEOUT_MS });
      const error = await a!.request(b!.localAddress, 'echo', new Uint8Array(1025), { timeoutMs: TIMEOUT_MS }).then(
        () => assert.fail('an oversized body was accepted'),
        (failure: unknown) => failure,
      );
      assert.ok(error instanceof TransportError);
      assert.equal(error.code, 'remote');
      assert.match(error.message, /413/);
      assert.equal(served, 1);
    } finally {
      await stopAll(transports);
    }
  });

  test('binding every interface needs an advertised address', () => {
    assert.throws(() => createUdpTransport({ bind: '0.0.0.0:7946' }), InvalidAddressError);
    assert.throws(() => createUdpTransport({ bind: '10.0.0.1:7946', advertise: '[::]:7946' }), InvalidAddressError);
    assert.throws(() => createUdpTransport({ bind: '::1:7946' }), InvalidAddressError);
    assert.doesNotThrow(() => createUdpTransport({ bind: '0.0.0.0:7946', advertise: '10.0.0.1:7946' }));
  });
});

