// The libp2p transport on 127.0.0.1: the shared Transport conformance suite, then what only libp2p
// has: a persistent node key, the peer id allowlist and gossipsub broadcasts.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TransportError } from '../../cluster/transport.js';
import {
  createLibp2pTransport,
  InsecureKeyFileError,
  InvalidKeyFileError,
  InvalidPeerAddressError,
  loadOrCreateNodeKey,
  NODE_KEY_FILE_NAME,
} from '../../transports/libp2p/index.js';
import { transportConformance } from './conformance.js';
import { eventually } from '../support/eventually.js';
import { libp2pConformanceFactory, libp2pTestNodes } from './fixtures/libp2p-nodes.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof TransportError, `expected a TransportError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

transportConformance('libp2p', libp2pConformanceFactory(50 * 1024 * 1024));

describe('libp2p transport: node key', () => {
  test('the key file is created with mode 0600 and reused, so the peer id is stable across restarts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-libp2p-key-'));
    const dataDir = join(dir, 'data');
    try {
      const first = createLibp2pTransport({ dataDir, allowedPeerIds: [] });
      await first.start();
      const peerId = first.peerId;
      assert.match(first.localAddress, new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/\\d+/p2p/${peerId}$`));
      await first.stop();
      const keyPath = join(dataDir, NODE_KEY_FILE_NAME);
      assert.equal((await stat(keyPath)).mode & 0o777, 0o600);
      const keyBytes = await readFile(keyPath);

      const second = createLibp2pTransport({ dataDir, allowedPeerIds: [] });
      await second.start();
      assert.equal(second.peerId, peerId);
      assert.ok(second.localAddress.endsWith(`/p2p/${peerId}`));
      await second.stop();
      assert.deepEqual(await readFile(keyPath), keyBytes, 'the key file is not rewritten');

      const other = await loadOrCreateNodeKey(join(dir, 'other'));
      assert.notEqual(other.peerId, peerId, 'another data directory gets another identity');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a key file readable by others or not holding a key is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-libp2p-key-'));
    try {
      const key = await loadOrCreateNodeKey(dir);
      await chmod(key.path, 0o644);
      await assert.rejects(loadOrCreateNodeKey(dir), InsecureKeyFileError);
      await assert.rejects(createLibp2pTransport({ dataDir: dir, allowedPeerIds: [] }).start(), InsecureKeyFileError);
      await writeFile(key.path, 'not a key', { mode: 0o600 });
      await chmod(key.path, 0o600);
      await assert.rejects(loadOrCreateNodeKey(dir), InvalidKeyFileError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('bad options throw at construction', () => {
    assert.throws(() => createLibp2pTransport({ dataDir: '', allowedPeerIds: [] }), TypeError);
    assert.throws(() => createLibp2pTransport({ dataDir: '/tmp/x', allowedPeerIds: [], listen: 'nowhere' }), InvalidPeerAddressError);
    assert.throws(() => createLibp2pTransport({ dataDir: '/tmp/x', allowedPeerIds: [], maxPacketBytes: 0 }), RangeError);
  });
});

describe('libp2p transport: allowlist', () => {
  test('a peer not on the allowlist is refused and never reaches a handler', async () => {
    const nodes = await libp2pTestNodes(2);
    const strangerDir = join(nodes.root, 'stranger');
    // The stranger trusts node 0, but node 0 does not know the stranger.
    const stranger = createLibp2pTransport({ dataDir: strangerDir, listen: '127.0.0.1:0', allowedPeerIds: [nodes.peerIds[0]!] });
    try {
      const [guarded, member] = nodes.transports as [typeof stranger, typeof stranger];
      const served: string[] = [];
      const packets: string[] = [];
      guarded.onRequest('echo', async (from, body) => {
        served.push(from);
        return body;
      });
      guarded.onPacket((from) => packets.push(from));
      await Promise.all([guarded.start(), member.start(), stranger.start()]);

      await expectCode(stranger.request(guarded.localAddress, 'echo', encoder.encode('hi'), { timeoutMs: 5000 }), 'refused');
      stranger.sendPacket(guarded.localAddress, encoder.encode('ping'));
      // Node 0 does not dial the stranger either: its own gater refuses the peer id before any socket opens.
      await expectCode(guarded.request(stranger.localAddress, 'echo', encoder.encode('hi'), { timeoutMs: 5000 }), 'refused');

      // A member on the list is served, over the same listener, while the stranger's packet is lost.
      const echoed = await member.request(guarded.localAddress, 'echo', encoder.encode('hi'), { timeoutMs: 5000 });
      assert.equal(decoder.decode(echoed), 'hi');
      member.sendPacket(guarded.localAddress, encoder.encode('ping'));
      await eventually('the member packet', () => packets.length, (count) => count > 0, { timeoutMs: 5000 });
      assert.deepEqual(served, [member.localAddress]);
      assert.deepEqual(packets, [member.localAddress]);
    } finally {
      await stranger.stop();
      await nodes.cleanup();
    }
  });
});

describe('libp2p transport: gossipsub broadcast', () => {
  test('a broadcast reaches every subscribed node, with the publisher address, and not the publisher', async () => {
    const nodes = await libp2pTestNodes(4);
    try {
      const received = new Map<number, string[]>();
      nodes.transports.forEach((transport, index) => {
        transport.broadcaster.subscribe('purge', (from, data) => {
          const list = received.get(index) ?? [];
          list.push(`${from} ${decoder.decode(data)}`);
          received.set(index, list);
        });
      });
      await Promise.all(nodes.transports.map((transport) => transport.start()));
      const [hub, ...others] = nodes.transports;
      // Connections come from traffic, as in a cluster where SWIM probes every member: a star here.
      for (const other of others) {
        other.onRequest('hello', async () => new Uint8Array(0));
        await hub!.request(other.localAddress, 'hello', new Uint8Array(0), { timeoutMs: 5000 });
      }
      await hub!.broadcaster.publish('purge', encoder.encode('/a'));
      // The last node is connected only to the hub: its message reaches the others through the mesh.
      await others[2]!.broadcaster.publish('purge', encoder.encode('/b'));
      const expected = (index: number): string[] =>
        [`${hub!.localAddress} /a`, `${others[2]!.localAddress} /b`].filter((line) => !line.startsWith(nodes.transports[index]!.localAddress));
      await eventually(
        'every broadcast at every node',
        () => nodes.transports.map((_, index) => received.get(index) ?? []),
        (got) => got.every((lines, index) => lines.length === expected(index).length),
        { timeoutMs: 15_000 },
      );
      nodes.transports.forEach((_, index) => assert.deepEqual((received.get(index) ?? []).sort(), expected(index).sort(), `at node ${index}`));
    } finally {
      await nodes.cleanup();
    }
  });

  test('publish on a stopped transport fails with code closed', async () => {
    const nodes = await libp2pTestNodes(1);
    try {
      await expectCode(nodes.transports[0]!.broadcaster.publish('purge', new Uint8Array(1)), 'closed');
    } finally {
      await nodes.cleanup();
    }
  });
});

describe('libp2p transport: packets and requests', () => {
  test('packets carry the sender address, requests large bodies, and failures keep their codes', async () => {
    const nodes = await libp2pTestNodes(2);
    try {
      const [a, b] = nodes.transports as [NonNullable<(typeof nodes.transports)[0]>, NonNullable<(typeof nodes.transports)[0]>];
      const packets: Array<[string, string]> = [];
      b.onPacket((from, data) => packets.push([from, decoder.decode(data)]));
      b.onRequest('echo', async (_from, body) => body);
      b.onRequest('fail', async () => {
        throw new Error('handler broke');
      });
      let slowCalls = 0;
      b.onRequest('slow', (_from, _body, signal) => {
        slowCalls++;
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('gone'))));
      });
      await a.start();
      await b.start();

      a.sendPacket(b.localAddress, encoder.encode('ping'));
      await eventually('the packet', () => packets.length, (count) => count === 1, { timeoutMs: 5000 });
      assert.deepEqual(packets, [[a.localAddress, 'ping']]);

      const large = new Uint8Array(8 * 1024 * 1024).map((_, index) => index % 251);
      assert.deepEqual(await a.request(b.localAddress, 'echo', large, { timeoutMs: 20_000 }), large);

      await expectCode(a.request(b.localAddress, 'fail', new Uint8Array(1), { timeoutMs: 5000 }), 'remote');
      await expectCode(a.request(b.localAddress, 'nobody', new Uint8Array(1), { timeoutMs: 5000 }), 'remote');
      await expectCode(a.request(b.localAddress, 'slow', new Uint8Array(1), { timeoutMs: 200 }), 'timeout');
      const controller = new AbortController();
      const aborted = a.request(b.localAddress, 'slow', new Uint8Array(1), { timeoutMs: 5000, signal: controller.signal });
      controller.abort();
      await expectCode(aborted, 'aborted');

      // A peer that goes away while serving a request: the exchange broke off.
      const callsBefore = slowCalls;
      const pending = expectCode(a.request(b.localAddress, 'slow', new Uint8Array(1), { timeoutMs: 5000 }), 'unreachable');
      await eventually('the request to be served', () => slowCalls, (calls) => calls > callsBefore, { timeoutMs: 5000 });
      const stopped = b.localAddress;
      await b.stop();
      await pending;
      await expectCode(a.request(stopped, 'echo', new Uint8Array(1), { timeoutMs: 5000 }), 'refused');
      await a.stop();
      await expectCode(a.request(stopped, 'echo', new Uint8Array(1), { timeoutMs: 5000 }), 'closed');
    } finally {
      await nodes.cleanup();
    }
  });
});
