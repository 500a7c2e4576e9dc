import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decodeMessage, decodePacket, encodeMessage, PacketBuilder } from '../../cluster/codec/message-codec.js';
import { decodeBroadcastBatch, decodePushPull, encodeBroadcastBatch, encodePushPull } from '../../cluster/codec/push-pull-codec.js';
import { MalformedMessageError, UnsupportedWireVersionError } from '../../cluster/codec/errors.js';
import { stringId } from '../../cluster/codec/bytes.js';
import type { ClusterMessage, PushPullState } from '../../cluster/codec/messages.js';
import { WIRE_VERSION } from '../../cluster/codec/messages.js';

function packetOf(...messages: ClusterMessage[]): Uint8Array {
  const builder = new PacketBuilder(1400);
  builder.begin();
  for (const message of messages) assert.ok(builder.add(encodeMessage(message)));
  return builder.finish();
}

const samples: ClusterMessage[] = [
  { kind: 'ping', seq: 1, target: 'node-1' },
  { kind: 'ack', seq: 2 ** 40 },
  { kind: 'nack', seq: 127 },
  { kind: 'ping-req', seq: 128, target: 'node-2', targetAddress: '10.0.0.2:7946', wantNack: true },
  { kind: 'ping-req', seq: 9, target: 'n', targetAddress: 'a', wantNack: false },
  { kind: 'suspect', name: 'node-3', incarnation: 5, from: 'node-1' },
  { kind: 'alive', name: 'nöde-4', address: '[::1]:7946', incarnation: 0, metadata: { mode: 'strong', admin: 'http://x:9000' } },
  { kind: 'alive', name: 'node-5', address: 'a', incarnation: 3, metadata: {} },
  { kind: 'dead', name: 'node-6', incarnation: 9, from: 'node-6' },
  { kind: 'user', origin: 'node-7', seq: 2 ** 51, payload: new Uint8Array([0, 1, 2, 255]) },
];

describe('packet codec', () => {
  for (const message of samples) {
    test(`round-trips ${message.kind}`, () => {
      assert.deepEqual(decodePacket(packetOf(message)), [message]);
    });
  }

  test('a compound packet keeps every message in order', () => {
    assert.deepEqual(decodePacket(packetOf(...samples)), samples);
  });

  test('starts with the wire version and is compact', () => {
    const packet = packetOf({ kind: 'ping', seq: 1, target: 'node-1' });
    assert.equal(packet[0], WIRE_VERSION);
    assert.equal(packet.length, 1 + 2 + 1 + 7);
  });

  test('rejects another wire version with a typed error', () => {
    const packet = packetOf({ kind: 'ack', seq: 1 });
    packet[0] = WIRE_VERSION + 1;
    assert.throws(() => decodePacket(packet), UnsupportedWireVersionError);
  });

  test('rejects empty and truncated packets as malformed', () => {
    assert.throws(() => decodePacket(new Uint8Array(0)), MalformedMessageError);
    const packet = packetOf({ kind: 'suspect', name: 'node-3', incarnation: 5, from: 'node-1' });
    for (let cut = 2; cut < packet.length; cut++) {
      assert.throws(() => decodePacket(packet.subarray(0, cut)), MalformedMessageError, `cut at ${cut}`);
    }
  });

  test('skips messages of unknown kinds', () => {
    const packet = packetOf({ kind: 'ack', seq: 1 }, { kind: 'ack', seq: 2 });
    packet[1] = 200; // first message's kind
    assert.deepEqual(decodePacket(packet), [{ kind: 'ack', seq: 2 }]);
  });

  test('arbitrary bytes decode or fail with a typed error, never anything else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), (bytes, versioned) => {
        const data = versioned ? Uint8Array.of(WIRE_VERSION, ...bytes) : bytes;
        try {
          decodePacket(data);
        } catch (error) {
          return error instanceof MalformedMessageError || error instanceof UnsupportedWireVersionError;
        }
        return true;
      }),
    );
  });

  test('the builder refuses a message that would overflow the packet', () => {
    const builder = new PacketBuilder(64);
    builder.begin();
    const big = encodeMessage({ kind: 'user', origin: 'o', seq: 1, payload: new Uint8Array(40) });
    assert.equal(builder.add(big), true);
    assert.equal(builder.add(big), false);
    assert.ok(builder.finish().length <= 64);
  });
});

describe('push-pull codec', () => {
  const state: PushPullState = {
    join: true,
    entries: [
      { name: 'a', address: 'x:1', state: 'alive', incarnation: 1, metadata: { k: 'v' }, rememberMs: 0 },
      { name: 'b', address: 'x:2', state: 'suspect', incarnation: 2, metadata: {}, rememberMs: 0 },
      { name: 'c', address: '', state: 'dead', incarnation: 3, metadata: {}, rememberMs: 599_000 },
      { name: 'd', address: 'x:4', state: 'left', incarnation: 0, metadata: {}, rememberMs: 12 },
    ],
    broadcastDigest: [
      { origin: 'a', seq: 2 ** 40 },
      { origin: 'b', seq: 7 },
      { origin: 'a', seq: 2 ** 40 + 1 },
    ],
    broadcasts: [encodeMessage({ kind: 'user', origin: 'b', seq: 9, payload: Uint8Array.of(1, 2, 3) })],
    userState: Uint8Array.of(42, 43),
  };

  test('round-trips a state', () => {
    const decoded = decodePushPull(encodePushPull(state));
    // The digest is grouped by origin on the wire.
    assert.deepEqual(decoded, { ...state, broadcastDigest: [state.broadcastDigest[0], state.broadcastDigest[2], state.broadcastDigest[1]] });
    assert.deepEqual(decodeMessage(decoded.broadcasts[0]!), { kind: 'user', origin: 'b', seq: 9, payload: Uint8Array.of(1, 2, 3) });
  });

  test('round-trips a broadcast batch and rejects a damaged one', () => {
    const messages = [Uint8Array.of(8, 1, 0), Uint8Array.of(8, 2, 1, 2)];
    const data = encodeBroadcastBatch(messages);
    assert.deepEqual(decodeBroadcastBatch(data), messages);
    assert.throws(() => decodeBroadcastBatch(data.subarray(0, data.length - 1)), MalformedMessageError);
    assert.throws(() => decodeBroadcastBatch(encodePushPull(state)), MalformedMessageError);
  });

  test('rejects garbage with typed errors', () => {
    const data = encodePushPull(state);
    assert.throws(() => decodePushPull(data.subarray(0, data.length - 1)), MalformedMessageError);
    assert.throws(() => decodePushPull(Uint8Array.of(...data, 0)), MalformedMessageError);
    assert.throws(() => decodePushPull(Uint8Array.of(WIRE_VERSION, 9, 0xff, 0xff, 0x7f)), MalformedMessageError);
    assert.throws(() => decodePushPull(Uint8Array.of(77, 9, 0)), UnsupportedWireVersionError);
    assert.throws(() => decodePushPull(packetOf({ kind: 'ack', seq: 1 })), MalformedMessageError);
  });
});

describe('codec caches', () => {
  test('an alive equal to the last one encoded for its name shares its bytes; any change re-encodes', () => {
    const metadata = { mode: 'strong' };
    const alive = { kind: 'alive', name: 'cache-1', address: 'a:1', incarnation: 4, metadata } as const;
    const bytes = encodeMessage(alive);
    assert.equal(encodeMessage({ ...alive }), bytes);
    for (const changed of [{ incarnation: 5 }, { address: 'a:2' }, { metadata: { mode: 'strong' } }]) {
      const other = encodeMessage({ ...alive, ...changed });
      assert.notEqual(other, bytes);
      assert.deepEqual(decodeMessage(other), { ...alive, ...changed });
    }
    assert.deepEqual(decodeMessage(encodeMessage(alive)), alive);
  });

  test('a suspect or dead equal to the last one of its kind for its member shares its bytes', () => {
    const suspect = { kind: 'suspect', name: 'cache-2', incarnation: 1, from: 'cache-3' } as const;
    const dead = { kind: 'dead', name: 'cache-2', incarnation: 1, from: 'cache-3' } as const;
    const suspectBytes = encodeMessage(suspect);
    const deadBytes = encodeMessage(dead);
    assert.equal(encodeMessage({ ...suspect }), suspectBytes);
    assert.equal(encodeMessage({ ...dead }), deadBytes);
    assert.deepEqual(decodeMessage(suspectBytes), suspect);
    assert.deepEqual(decodeMessage(deadBytes), dead);
    const otherAccuser = encodeMessage({ ...suspect, from: 'cache-4' });
    assert.notEqual(otherAccuser, suspectBytes);
    assert.deepEqual(decodeMessage(otherAccuser), { ...suspect, from: 'cache-4' });
  });

  test('stringId gives each string one stable id, distinct strings distinct ids', () => {
    const first = stringId('id-test-a');
    assert.ok(first >= 0);
    assert.equal(stringId('id-test-a'), first);
    assert.equal(stringId(['id', 'test', 'a'].join('-')), first);
    assert.notEqual(stringId('id-test-b'), first);
  });

  test('the stale-alive filter sees the id of the name it is asked about', () => {
    const alive: ClusterMessage = { kind: 'alive', name: 'filter-1', address: 'a', incarnation: 2, metadata: {} };
    const seen: [string, number, number][] = [];
    const decoded = decodePacket(packetOf(alive, { kind: 'ack', seq: 1 }, alive), (name, nameId, incarnation) => {
      seen.push([name, nameId, incarnation]);
      return seen.length === 1;
    });
    assert.deepEqual(seen, [
      ['filter-1', stringId('filter-1'), 2],
      ['filter-1', stringId('filter-1'), 2],
    ]);
    assert.deepEqual(decoded, [{ kind: 'ack', seq: 1 }, alive]);
  });
});
