// The Transport conformance suite (DESIGN principle 5, after libp2p's interface-compliance-tests and
// undici's cacheStoreTests): one set of cases, run unchanged against every implementation of
// cluster/transport.ts. A transport file supplies a factory; a case the implementation cannot model
// (real ports for the simulator) is skipped with the reason, never weakened.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TransportError, type Address, type Transport, type TransportErrorCode } from '../../cluster/transport.js';
import { eventually } from '../support/eventually.js';

/** A peer that accepts traffic and never answers (a stalled process), and how to release it. */
export interface UnresponsivePeer {
  readonly address: Address;
  close(): Promise<void>;
}

/** N started transports that can reach each other, and the means to drive and inspect their network. */
export interface ConformanceNetwork {
  readonly transports: readonly Transport[];
  /** Waits for `promise`, driving the network's own time if it has one (the simulator's virtual clock). */
  settle<T>(promise: Promise<T>): Promise<T>;
  /** An address where nothing listens: requests there are refused by the host. */
  refusedAddress(): Promise<Address>;
  unresponsivePeer(): Promise<UnresponsivePeer>;
  /** Stops every transport not yet stopped and frees what the network itself holds. */
  cleanup(): Promise<void>;
}

export interface ConformanceFactory {
  create(count: number): Promise<ConformanceNetwork>;
  /**
   * Binds `address` again (UDP and TCP as the transport uses them) and releases it; rejects when it
   * is still in use. Absent when addresses are not real ports: the case is skipped with `noPortsReason`.
   */
  rebind?(address: Address): Promise<void>;
  noPortsReason?: string;
  /** One request answered with this many bytes (a 50 MiB peer fetch); absent: the case is skipped. */
  hugeResponseBytes?: number;
}

/** 8 MiB: several times any socket or stream buffer, so the body really is streamed in pieces. */
const LARGE_PAYLOAD_BYTES = 8 * 1024 * 1024;
const CONCURRENT_REQUESTS = 1000;
/** Generous bounds for exchanges that must succeed; the cases never assert on speed. */
const ANSWER_TIMEOUT_MS = 30_000;
/** Short bounds for exchanges that must fail by timing out. */
const SHORT_TIMEOUT_MS = 300;
/** How long the shutdown case waits for handles closed by stop() to leave the process. */
const RESOURCE_SETTLE_BUDGET_MS = 3000;

function pattern(byteLength: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(byteLength);
  for (let i = 0; i < byteLength; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

function sameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  assert.equal(actual.byteLength, expected.byteLength, `${what}: length`);
  assert.ok(Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected), `${what}: content`);
}

async function expectCode(promise: Promise<unknown>, codes: readonly TransportErrorCode[]): Promise<TransportErrorCode> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TransportError, `expected a TransportError, got ${String(error)}`);
    assert.ok(codes.includes(error.code), `expected code ${codes.join(' or ')}, got ${error.code}: ${error.message}`);
    return error.code;
  }
  assert.fail(`expected a TransportError with code ${codes.join(' or ')}, but the request succeeded`);
}

function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The kinds of which more are active now than in `before`, with both counts. */
function leftoverResources(before: Map<string, number>): string[] {
  const leftovers: string[] = [];
  for (const [kind, count] of resourceCounts()) {
    const was = before.get(kind) ?? 0;
    if (count > was) leftovers.push(`${kind}: ${was} before, ${count} after`);
  }
  return leftovers;
}

async function withNetwork(factory: ConformanceFactory, count: number, body: (network: ConformanceNetwork) => Promise<void>): Promise<void> {
  const network = await factory.create(count);
  try {
    await body(network);
  } finally {
    await network.cleanup();
  }
}

function onePacket(transport: Transport): Promise<{ from: Address; data: Uint8Array }> {
  return new Promise((resolve) => {
    transport.onPacket((from, data) => resolve({ from, data: data.slice() }));
  });
}

export function transportConformance(name: string, factory: ConformanceFactory): void {
  describe(`Transport conformance: ${name}`, { timeout: 120_000 }, () => {
    test('a packet arrives with its data and the sender address', async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        const arrival = onePacket(b!);
        const data = pattern(200, 7);
        a!.sendPacket(b!.localAddress, data);
        data.fill(0); // The sender may reuse its buffer once sendPacket returns.
        const { from, data: received } = await settle(arrival);
        assert.equal(from, a!.localAddress);
        sameBytes(received, pattern(200, 7), 'packet');
      });
    });

    test('a packet of exactly maxPacketBytes arrives; one byte more is refused at the sender', async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        assert.ok(a!.maxPacketBytes >= 512, `maxPacketBytes ${a!.maxPacketBytes} leaves SWIM too little room`);
        const arrival = onePacket(b!);
        a!.sendPacket(b!.localAddress, pattern(a!.maxPacketBytes, 3));
        const { data } = await settle(arrival);
        sameBytes(data, pattern(a!.maxPacketBytes, 3), 'full packet');
        assert.throws(() => a!.sendPacket(b!.localAddress, new Uint8Array(a!.maxPacketBytes + 1)), { name: 'PacketTooLargeError' });
      });
    });

    test('a request is answered by the handler of its channel, which sees the caller address', async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        const callers: Address[] = [];
        b!.onRequest('swim/push-pull', (from, body) => {
          callers.push(from);
          return Promise.resolve(Uint8Array.from([...body].reverse()));
        });
        b!.onRequest('user/other', () => Promise.resolve(Uint8Array.of(9)));
        const answer = await settle(a!.request(b!.localAddress, 'swim/push-pull', Uint8Array.of(1, 2, 3), { timeoutMs: ANSWER_TIMEOUT_MS }));
        assert.deepEqual([...answer], [3, 2, 1]);
        assert.deepEqual(callers, [a!.localAddress]);
        const empty = await settle(a!.request(b!.localAddress, 'user/other', new Uint8Array(0), { timeoutMs: ANSWER_TIMEOUT_MS }));
        assert.deepEqual([...empty], [9]);
      });
    });

    test(`an ${LARGE_PAYLOAD_BYTES / 1024 / 1024} MiB request and response travel intact`, async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        b!.onRequest('echo', (_from, body) => Promise.resolve(body.slice().reverse()));
        const body = pattern(LARGE_PAYLOAD_BYTES, 11);
        const answer = await settle(a!.request(b!.localAddress, 'echo', body, { timeoutMs: ANSWER_TIMEOUT_MS }));
        sameBytes(answer, pattern(LARGE_PAYLOAD_BYTES, 11).reverse(), 'echoed body');
      });
    });

    const huge = factory.hugeResponseBytes;
    test(`a ${huge === undefined ? 'huge' : `${huge / 1024 / 1024} MiB`} response (a peer fetch) arrives intact`, {
      skip: huge === undefined ? 'this transport runs the large-payload case only' : false,
    }, async () => {
      const bytes = huge ?? 0;
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        const object = pattern(bytes, 5);
        b!.onRequest('fetch', () => Promise.resolve(object));
        const answer = await settle(a!.request(b!.localAddress, 'fetch', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS }));
        sameBytes(answer, object, 'fetched object');
      });
    });

    test('a request without an answer within timeoutMs fails with timeout', async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        b!.onRequest('silent', () => new Promise<Uint8Array>(() => undefined));
        await settle(expectCode(a!.request(b!.localAddress, 'silent', Uint8Array.of(1), { timeoutMs: SHORT_TIMEOUT_MS }), ['timeout']));
      });
    });

    test('aborting the signal fails the request with aborted, before or during the exchange', async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        let entered!: () => void;
        const handlerEntered = new Promise<void>((resolve) => (entered = resolve));
        b!.onRequest('slow', () => {
          entered();
          return new Promise<Uint8Array>(() => undefined);
        });
        const already = new AbortController();
        already.abort();
        await settle(expectCode(a!.request(b!.localAddress, 'slow', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS, signal: already.signal }), ['aborted']));

        const controller = new AbortController();
        const pending = expectCode(a!.request(b!.localAddress, 'slow', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS, signal: controller.signal }), ['aborted']);
        await settle(handlerEntered);
        controller.abort();
        await settle(pending);
      });
    });

    test('a handler that fails, or a channel without a handler, fails the request with remote', async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        b!.onRequest('broken', () => Promise.reject(new Error('handler failure')));
        b!.onRequest('throws', () => {
          throw new Error('synchronous handler failure');
        });
        await settle(expectCode(a!.request(b!.localAddress, 'broken', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS }), ['remote']));
        await settle(expectCode(a!.request(b!.localAddress, 'throws', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS }), ['remote']));
        await settle(expectCode(a!.request(b!.localAddress, 'nobody-handles-this', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS }), ['remote']));
      });
    });

    test('a refused peer and an unresponsive peer are reported as distinct errors', async () => {
      await withNetwork(factory, 1, async ({ transports: [a], settle, refusedAddress, unresponsivePeer }) => {
        const refused = await refusedAddress();
        await settle(expectCode(a!.request(refused, 'any', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS }), ['refused']));
        const stalled = await unresponsivePeer();
        try {
          const code = await settle(expectCode(a!.request(stalled.address, 'any', Uint8Array.of(1), { timeoutMs: SHORT_TIMEOUT_MS }), ['timeout', 'unreachable']));
          assert.notEqual(code, 'refused');
        } finally {
          await stalled.close();
        }
      });
    });

    test(`${CONCURRENT_REQUESTS} requests in flight at once are all answered, each with its own answer`, async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        b!.onRequest('count', (_from, body) => Promise.resolve(Uint8Array.from(body, (byte) => byte ^ 0xff)));
        const requests = Array.from({ length: CONCURRENT_REQUESTS }, (_, i) =>
          a!.request(b!.localAddress, 'count', Uint8Array.of(i & 0xff, i >> 8), { timeoutMs: ANSWER_TIMEOUT_MS }),
        );
        const answers = await settle(Promise.all(requests));
        answers.forEach((answer, i) => assert.deepEqual([...answer], [(i & 0xff) ^ 0xff, (i >> 8) ^ 0xff], `answer ${i}`));
      });
    });

    test('a native broadcast reaches every other subscriber with the publisher address', async (context) => {
      await withNetwork(factory, 3, async ({ transports, settle }) => {
        const [a, b, c] = transports;
        if (a!.broadcaster === undefined) {
          context.skip('this transport has no native broadcaster (the cluster gossips instead)');
          return;
        }
        const arrivals = [b!, c!].map(
          (transport) =>
            new Promise<{ from: Address; data: Uint8Array }>((resolve) => {
              transport.broadcaster!.subscribe('conformance', (from, data) => resolve({ from, data: data.slice() }));
            }),
        );
        a!.broadcaster.subscribe('conformance', () => assert.fail('a publisher does not receive its own broadcast'));
        // A mesh (gossipsub) may need a moment to form: publish every 100 ms until every subscriber has it.
        let delivered = false;
        const all = Promise.all(arrivals).then((received) => {
          delivered = true;
          return received;
        });
        const publishing = eventually(
          'the broadcast at every subscriber',
          async () => {
            if (!delivered) await a!.broadcaster!.publish('conformance', Uint8Array.of(4, 2));
            return delivered;
          },
          (done) => done,
          { timeoutMs: 5_000, everyMs: 100 },
        );
        const [received] = await Promise.all([settle(all), publishing]);
        for (const { from, data } of received) {
          assert.equal(from, a!.localAddress);
          assert.deepEqual([...data], [4, 2]);
        }
      });
    });

    test('stop fails pending requests with closed, and a stopped transport sends nothing', async () => {
      await withNetwork(factory, 2, async ({ transports: [a, b], settle }) => {
        b!.onRequest('silent', () => new Promise<Uint8Array>(() => undefined));
        let entered!: () => void;
        const handlerEntered = new Promise<void>((resolve) => (entered = resolve));
        b!.onRequest('entered', () => {
          entered();
          return new Promise<Uint8Array>(() => undefined);
        });
        const pending = expectCode(a!.request(b!.localAddress, 'entered', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS }), ['closed']);
        await settle(handlerEntered);
        await a!.stop();
        await settle(pending);
        await settle(expectCode(a!.request(b!.localAddress, 'silent', Uint8Array.of(1), { timeoutMs: ANSWER_TIMEOUT_MS }), ['closed']));
        assert.doesNotThrow(() => a!.sendPacket(b!.localAddress, Uint8Array.of(1)));
        await a!.stop(); // A second stop is harmless.
      });
    });

    test('shutdown frees every port, socket and timer', async (context) => {
      const before = resourceCounts();
      const network = await factory.create(2);
      let addresses: Address[] = [];
      try {
        const [a, b] = network.transports;
        addresses = [a!.localAddress, b!.localAddress];
        b!.onRequest('echo', (_from, body) => Promise.resolve(body));
        a!.onRequest('echo', (_from, body) => Promise.resolve(body));
        const arrival = onePacket(b!);
        a!.sendPacket(b!.localAddress, Uint8Array.of(1));
        await network.settle(arrival);
        await network.settle(a!.request(b!.localAddress, 'echo', pattern(100_000, 1), { timeoutMs: ANSWER_TIMEOUT_MS }));
        await network.settle(b!.request(a!.localAddress, 'echo', Uint8Array.of(2), { timeoutMs: ANSWER_TIMEOUT_MS }));
      } finally {
        await network.cleanup();
      }
      await eventually('every handle released after every transport stopped', () => leftoverResources(before), (leftovers) => leftovers.length === 0, {
        timeoutMs: RESOURCE_SETTLE_BUDGET_MS,
        everyMs: 50,
      });
      if (factory.rebind === undefined) {
        context.skip(factory.noPortsReason ?? 'this transport has no real ports to bind again');
        return;
      }
      for (const address of addresses) await factory.rebind(address);
    });
  });
}
