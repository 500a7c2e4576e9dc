// Opening and closing a node's listeners, with errors an operator can act on.
import { createServer, type Server } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import { Server as TlsServer } from 'node:tls';
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
 * its URL (`https:` for a listener that terminates TLS), the port actually bound. `reusePort`: the threads of one node each open the data-plane
 * port, and the kernel spreads connections among them (SO_REUSEPORT). `fd`: the listening socket an
 * upgraded predecessor handed over (upgrade-successor.ts), taken as it is, its queue included;
 * `address` then only names it in errors.
 */
export async function listen(server: Server, listener: string, address: string, options: { reusePort: boolean; fd?: number }): Promise<string> {
  const onSocket = options.fd === undefined && address.startsWith('/');
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => reject(new ListenError(listener, address, error));
    server.once('error', onError);
    const done = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (options.fd !== undefined) server.listen({ fd: options.fd }, done);
    else if (onSocket) server.listen({ path: address }, done);
    else {
      const { host, port } = splitHostPort(address);
      server.listen({ host, port, reusePort: options.reusePort }, done);
    }
  });
  if (onSocket) return `unix:${address}`;
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return `${server instanceof TlsServer ? 'https' : 'http'}://${shownHost}:${bound.port}`;
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

/** An address the threads of a node are to open, held for them until `release`. */
export interface ReservedAddress {
  readonly address: string;
  release(): Promise<void>;
}

/**
 * probeAddress, for a listener about to be opened. A port 0 becomes a port the system picks, and
 * between the probe closing and the threads opening it, any process could take it: a listener of its
 * own, or the local end of an outgoing connection, which the system takes from the same range. So a
 * port 0 is held by a socket that joins the threads' SO_REUSEPORT group until they have opened it;
 * nobody knows the port yet, and a connection that reaches the holder anyway is closed. A configured
 * port is checked as probeAddress checks it, and is not held: a client may already be connecting.
 */
export async function reserveAddress(listener: string, address: string): Promise<ReservedAddress> {
  if (address.startsWith('/') || splitHostPort(address).port !== 0) return { address: await probeAddress(listener, address), release: () => Promise.resolve() };
  const holder = createServer();
  holder.on('connection', (socket) => socket.destroy());
  const url = await listen(holder, listener, address, { reusePort: true });
  return { address: new URL(url).host, release: () => new Promise<void>((resolve) => holder.close(() => resolve())) };
}

/**
 * Opens a listener that fails, as any listener does, when its port is taken; `shareable`: with
 * SO_REUSEPORT, after the same exclusive check (reserveAddress, which holds a port 0 meanwhile), so
 * that an upgrade's successor can open a socket of its own beside it (SVC_NODE_INTERNALS=off,
 * upgrade-successor.ts). Resolves with its URL.
 */
export async function listenChecked(server: Server, listener: string, address: string, shareable: boolean): Promise<string> {
  if (!shareable) return listen(server, listener, address, { reusePort: false });
  const reserved = await reserveAddress(listener, address);
  return listen(server, listener, reserved.address, { reusePort: true }).finally(() => reserved.release());
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

/**
 * The descriptor of `server`'s listening socket, which an upgrade's successor inherits. Node keeps it
 * on the server's handle only (on Unix), a private internal: the third use node-internals.ts rules
 * out, with `SVC_NODE_INTERNALS=off` this is never called and the successor opens sockets of its own
 * beside the predecessor's (SO_REUSEPORT) instead. A handle without one cannot be handed over.
 */
export function listeningFd(server: Server): number {
  const fd = (server as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('this listener has no socket descriptor to hand over');
  return fd;
}

/**
 * Stops `server` taking connections, and resolves true once every connection it has ended (false
 * after `timeoutMs`), without closing idle keep-alive ones: a client may be sending its next request
 * on one at that very moment, and would see it cut. Their next answer says `Connection: close` (the
 * node's drain flag is up), and Node closes those that stay idle after `limits.keep_alive_timeout`, a
 * time it announces in every answer. Node's own `Server.close` closes idle connections at once: the
 * listener is closed as a plain net.Server here.
 */
export function stopAccepting(server: Server, timeoutMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    if (!server.listening) {
      resolve(true);
      return;
    }
    const timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
    NetServer.prototype.close.call(server, () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
