// A data plane configured on port 0 gets a port the system picks, and its threads open it a moment
// later. Between the two, another process could take the port (a listener, or an outgoing connection's
// local end): beside a second test suite, a node failed to start so ("address already in use"). The
// port is now held for the threads: only a socket of the same SO_REUSEPORT group can open it until it
// is released. A configured port is checked, never held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { reserveAddress } from '../../src/node/listeners.js';
import { freePort } from '../../bench/support/free-port.js';

/** Opens a listener on 127.0.0.1:`port`; the error code when it cannot. */
async function tryListen(port: number, reusePort: boolean): Promise<{ server: Server } | { code: string | undefined }> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code }));
    server.listen({ host: '127.0.0.1', port, reusePort }, () => resolve({ server }));
  });
}

async function closed(opened: { server: Server } | { code: string | undefined }): Promise<void> {
  if ('server' in opened) await new Promise((resolve) => opened.server.close(resolve));
}

test('a port 0 is held for the threads until released: another process cannot take it, a thread of the group can', async () => {
  const reserved = await reserveAddress('data-plane', '127.0.0.1:0');
  const port = Number(reserved.address.split(':').at(-1));
  assert.ok(port > 0, reserved.address);
  try {
    const stranger = await tryListen(port, false);
    assert.deepEqual(stranger, { code: 'EADDRINUSE' }, 'held against a listener outside the group');
    const thread = await tryListen(port, true);
    assert.ok('server' in thread, 'a thread opens it with SO_REUSEPORT');
    await closed(thread);
  } finally {
    await reserved.release();
  }
  const after = await tryListen(port, false);
  assert.ok('server' in after, 'free once released');
  await closed(after);
});

test('a configured port is checked and not held', async () => {
  const port = await freePort();
  const reserved = await reserveAddress('data-plane', `127.0.0.1:${port}`);
  assert.equal(reserved.address, `127.0.0.1:${port}`);
  const other = await tryListen(port, false);
  assert.ok('server' in other, 'nothing holds it');
  await assert.rejects(reserveAddress('data-plane', `127.0.0.1:${port}`), /the data-plane listener cannot open 127\.0\.0\.1:\d+: address already in use/);
  await closed(other);
  await reserved.release();
});
