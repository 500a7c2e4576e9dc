// Connections accepted at one address, piped byte for byte to another. A process in a network
// namespace and one outside it cannot reach each other's TCP addresses, but both reach a unix socket
// in the file system they share: so a test talks to processes in namespaces through a forwarder on its
// side (loopback TCP ↔ unix socket) and one in the namespace (unix socket ↔ the namespace's addresses).
import { connect, createServer, type Socket } from 'node:net';

/** A unix socket's path, or a TCP host and port. */
export type Endpoint = { path: string } | { host: string; port: number };

export interface Forwarder {
  /** Stops accepting and cuts every open connection. */
  close(): Promise<void>;
}

export async function forwardConnections(from: Endpoint, to: Endpoint): Promise<Forwarder> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(to);
    for (const socket of [client, upstream]) {
      open.add(socket);
      // Either side failing or closing ends the pair: HTTP needs no half-closed connection.
      socket.on('error', () => undefined);
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(from, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
