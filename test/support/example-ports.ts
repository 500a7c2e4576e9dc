// The examples listen on fixed ports (the demo origin on 8081, examples/tls on 8443 and 9443, the
// example clusters on theirs), so the tests that run them cannot take ephemeral ones. Two such tests,
// of one suite or of two suites run side by side on one machine, would race for a port between
// checking it and binding it: each takes this machine-wide lock first, a file in the temporary
// directory, and they take turns. A port still held once the lock is taken is held by something
// else, and the test skips, saying which.
import { open, readFile, unlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.js';

const LOCK = join(tmpdir(), 'svc-test-example-ports.lock');
/** Long enough for another test running an example to finish with its ports. */
const LOCK_WAIT_MS = 120_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock if it is free, or held by a process that is gone; whether it was taken. */
async function tryLock(): Promise<boolean> {
  try {
    const file = await open(LOCK, 'wx');
    await file.writeFile(String(process.pid));
    await file.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const holder = Number(await readFile(LOCK, 'utf8').catch(() => ''));
  // A holder that died without releasing it (or a file still being written: an empty one is read again).
  if (Number.isInteger(holder) && holder > 0 && !alive(holder)) await unlink(LOCK).catch(() => undefined);
  return false;
}

/** Waits for the example ports' lock; resolves with its release. */
export async function takeExamplePorts(): Promise<() => Promise<void>> {
  await eventually('the example ports lock', tryLock, (taken) => taken, { everyMs: 100, timeoutMs: LOCK_WAIT_MS });
  return async () => {
    if (Number(await readFile(LOCK, 'utf8').catch(() => '')) === process.pid) await unlink(LOCK);
  };
}

/** The first of these ports (TCP, then UDP) that something holds on 127.0.0.1, if any. */
export async function busyPort(tcp: readonly number[], udp: readonly number[] = []): Promise<string | undefined> {
  for (const port of tcp) {
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) return `TCP 127.0.0.1:${port}`;
    await new Promise((resolve) => server.close(resolve));
  }
  for (const port of udp) {
    const socket = createSocket('udp4');
    const bound = await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) return `UDP 127.0.0.1:${port}`;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
  return undefined;
}
