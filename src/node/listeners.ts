// Opening and closing a node's listeners, with errors an operator can act on.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { splitHostPort } from '../config/index.js';

/** What the system says when a listener cannot open, in the words an operator searches for. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'no interface of this host has that address',
  EACCES: 'permission denied',
};

/** The configuration key that sets each listener's address; the internal sockets have none. */
const LISTENER_KEYS: Readonly<Record<string, string>> = {
  'data-plane': 'listen',
  admin: 'admin.listen',
};

/**
 * A listener that could not open: names which one, its configured address and why; `key` is the
 * configuration key to change (`svc serve` prints it first, as it prints a configuration problem).
 */
export class ListenError extends Error {
  readonly key: string | undefined;

  constructor(listener: string, address: string, cause: NodeJS.ErrnoException) {
    const reason = cause.code !== undefined && LISTEN_FAILURES[cause.code] ? `${LISTEN_FAILURES[cause.code]} (${cause.code})` : cause.message;
    super(`the ${listener} listener cannot open ${address}: ${reason}`, { cause });
    this.name = 'ListenError';
    this.key = LISTENER_KEYS[listener];
  }
}

/**
 * Opens `server` on `address` (`host:port`, or an absolute path for a Unix socket) and resolves with
 * its URL, the port actually bound. `reusePort`: the threads of one node each open the data-plane
 * port, and the kernel spreads connections among them (SO_REUSEPORT).
 */
export async function listen(server: Server, listener: string, address: string, options: { reusePort: boolean }): Promise<string> {
  const onSocket = address.startsWith('/');
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => reject(new ListenError(listener, address, error));
    server.once('error', onError);
    const done = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (onSocket) server.listen({ path: address }, done);
    else {
      const { host, port } = splitHostPort(address);
      server.listen({ host, port, reusePort: options.reusePort }, done);
    }
  });
  if (onSocket) return `unix:${address}`;
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return `http://${shownHost}:${bound.port}`;
}

/**
 * The address the threads of a node are to open, all at once, with SO_REUSEPORT: `address` itself,
 * checked by opening and closing it once without SO_REUSEPORT (so that a port taken by any process,
 * another svc of the same user included, fails with ListenError rather than be shared), or for a
 * port 0 the port the system gave that probe.
 */
export async function probeAddress(listener: string, address: string): Promise<string> {
  const probe = createServer();
  const url = await listen(probe, listener, address, { reusePort: false });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return new URL(url).host;
}

/**
 * How long a stopping node lets busy requests finish before it cuts them: their connections, and
 * the origin requests their fills still read (docs/operations.md "Stopping").
 */
export const STOP_GRACE_MS = 2_000;

export async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Connections still busy after the grace are cut: stop must end.
    setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS).unref();
  });
}
