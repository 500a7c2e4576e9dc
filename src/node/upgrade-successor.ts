// The successor's side of an upgrade (upgrade-protocol.ts): what `svc serve` started by an upgrading
// predecessor takes over, and when. It takes the listening sockets handed over for the addresses its
// own configuration names (a socket of an address it no longer listens on is closed at once, so that
// nothing waits in its queue for an accept that will not come), asks for the node's directory before
// it opens the warm tier, and says it serves once every listener is open. Handed no descriptor
// (SVC_NODE_INTERNALS=off), it opens sockets of its own on the predecessor's addresses, beside its
// sockets (SO_REUSEPORT): the data plane's where it would take them, the admin listener's before it
// asks for the directory, so that admin connections find a socket once the predecessor closes its own.
import { closeSync } from 'node:fs';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { listen } from './listeners.js';
import { isPredecessorMessage, parseHandedOver, UPGRADE_ENV, type HandedListener, type HandedOver, type SuccessorMessage } from './upgrade-protocol.js';

/**
 * Listening sockets handed over, and the address they are bound to (`host:port`, the port actual);
 * no descriptor when the predecessor handed none (SVC_NODE_INTERNALS=off): a socket of its own is
 * opened on `address` with SO_REUSEPORT.
 */
export interface HandedSockets {
  fds: number[];
  address: string;
}

/** The admin listener a successor took over: its URL now, and what makes it answer once the node serves. */
export interface SuccessorAdmin {
  url: string;
  serve(): Promise<void>;
}

export class Successor {
  private constructor(
    private readonly handed: HandedOver,
    private readonly channel: NodeJS.Process & { send: NonNullable<NodeJS.Process['send']> },
  ) {}

  /** The successor this process is, when an upgrading predecessor started it; undefined otherwise. */
  static ofThisProcess(): Successor | undefined {
    const text = process.env[UPGRADE_ENV];
    if (text === undefined) return undefined;
    // Read once: the data-plane threads and any later successor are not handed these descriptors.
    delete process.env[UPGRADE_ENV];
    const handed = parseHandedOver(text);
    if (process.send === undefined) throw new Error(`${UPGRADE_ENV} is set, but this process has no channel to the predecessor that would have set it`);
    return new Successor(handed, process as NodeJS.Process & { send: NonNullable<NodeJS.Process['send']> });
  }

  /** The predecessor's pid. */
  get from(): number {
    return this.handed.from;
  }

  /**
   * The admin listener, when `address` (`admin.listen`) is the predecessor's; called just before
   * takeOver(). A socket handed over is taken once the node serves (connections wait in its queue
   * until then). Without one, `server` opens now beside the predecessor's socket, its requests held
   * until the node serves: after takeOver() the predecessor takes none, and a connection made then
   * must find a socket.
   */
  async openAdmin(server: Server, address: string): Promise<SuccessorAdmin | undefined> {
    const handed = taken(this.handed.admin, address);
    if (handed === undefined) return undefined;
    const url = `http://${handed.address}`;
    const fd = handed.fds[0];
    if (fd !== undefined) {
      return {
        url,
        serve: async () => {
          await listen(server, 'admin', handed.address, { reusePort: false, fd });
        },
      };
    }
    const release = holdRequests(server);
    await listen(server, 'admin', handed.address, { reusePort: true });
    return { url, serve: () => Promise.resolve(release()) };
  }

  /** The data plane's sockets, when `address` (`listen`) is the predecessor's. */
  dataSockets(address: string): HandedSockets | undefined {
    return taken(this.handed.data, address);
  }

  /**
   * Asks the predecessor to let go of the node's directory (warm tier, invalidation journal, CDN
   * queue, lock) and of admin requests, and resolves once it has, or is gone.
   */
  async takeOver(): Promise<void> {
    // The channel keeps this process alive while it has listeners: none is left once the answer is
    // in, so that a start that fails after it ends the process as any failed start does.
    const released = new Promise<void>((resolve) => {
      const done = (): void => {
        this.channel.off('message', onMessage);
        this.channel.off('disconnect', done);
        resolve();
      };
      const onMessage = (message: unknown): void => {
        if (isPredecessorMessage(message)) done();
      };
      this.channel.on('message', onMessage);
      this.channel.on('disconnect', done);
    });
    this.#send({ kind: 'release' });
    await released;
  }

  /** Tells the predecessor this process serves, and lets go of the channel (which would keep it alive). */
  serving(): void {
    this.#send({ kind: 'serving' }, () => {
      if (this.channel.connected) this.channel.disconnect();
    });
  }

  #send(message: SuccessorMessage, sent?: () => void): void {
    // A predecessor that is gone has nothing to hand over: the directory's lock tells.
    if (this.channel.connected) this.channel.send(message, undefined, undefined, () => sent?.());
  }
}

function taken(listener: HandedListener, address: string): HandedSockets | undefined {
  if (listener.address === address) return { fds: listener.fds, address: new URL(listener.url).host };
  for (const fd of listener.fds) closeSync(fd);
  return undefined;
}

/**
 * Holds the requests `server` is sent until the returned function is called, which hands each to the
 * server's own request listeners in the order it came (those whose client left meanwhile excepted),
 * and every later one directly.
 */
function holdRequests(server: Server): () => void {
  const listeners = server.listeners('request') as RequestListener[];
  const held: [IncomingMessage, ServerResponse][] = [];
  const hold = (request: IncomingMessage, response: ServerResponse): void => void held.push([request, response]);
  server.removeAllListeners('request');
  server.on('request', hold);
  return () => {
    server.off('request', hold);
    for (const listener of listeners) server.on('request', listener);
    for (const [request, response] of held.splice(0)) {
      if (request.socket.destroyed) continue;
      for (const listener of listeners) listener.call(server, request, response);
    }
  };
}
