// User channels keep their names on the wire; only the protocol's `swim/` namespace is reserved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClusterMember, createRandom, ReservedChannelError } from '../../cluster/index.js';
import { SimNetwork } from '../../sim/sim-network.js';

test('user channels travel under their own names, and swim/ is refused', async () => {
  const network = new SimNetwork({ random: createRandom(5) });
  const a = network.addNode('10.0.0.1:7946');
  const b = network.addNode('10.0.0.2:7946');
  const seen: string[] = [];
  b.transport.onRequest('purge', async () => {
    seen.push('purge');
    return Uint8Array.of(1);
  });
  const member = createClusterMember({ name: 'a', transport: a.transport, clock: a.clock, random: createRandom(6) });
  assert.throws(() => member.handleRequest('swim/push-pull', async () => new Uint8Array(0)), ReservedChannelError);
  assert.throws(() => member.handleRequest('', async () => new Uint8Array(0)), ReservedChannelError);
  await member.start();
  await b.transport.start();
  const answer = member.request({ name: 'b', address: '10.0.0.2:7946' } as never, 'purge', Uint8Array.of(0), { timeoutMs: 1000 });
  await network.clock.runFor(50);
  assert.deepEqual([...(await answer)], [1]);
  assert.deepEqual(seen, ['purge'], 'the request arrived on channel "purge", not a prefixed one');
  await member.stop();
});
