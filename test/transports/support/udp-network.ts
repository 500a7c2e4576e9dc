// Builds networks of real UDP transports on 127.0.0.1 ephemeral ports for the conformance suite and
// the UDP-specific tests, plus the peers a network needs to show failures: a port where nothing
// listens, and a peer that accepts connections and packets but never answers (a stalled process).

import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createUdpTransport, type UdpTransport, type UdpTransportOptions } from '../../../transports/udp/index.js';
import type { TlsMaterial } from '../../../transports/udp/index.js';
import type { ConformanceFactory, ConformanceNetwork, UnresponsivePeer } from '../conformance.js';

const TLS_DIR = fileURLToPath(new URL('../../../../test/transports/fixtures/tls/', import.meta.url));

function pem(name: string): Buffer {
  return readFileSync(TLS_DIR + name);
}

/** A member certificate from the test cluster's CA. */
export function clusterTls(): TlsMaterial {
  return { cert: pem('node.crt'), key: pem('node.key'), ca: pem('cluster-ca.crt') };
}

/** A certificate from another CA that trusts only itself: what an intruder holds. */
export function intruderTls(): TlsMaterial {
  return { cert: pem('intruder.crt'), key: pem('intruder.key'), ca: pem('rogue-ca.crt') };
}

/** Fixed test keys (32 bytes each); real deployments take theirs from `cluster.gossip_keys`. */
export const TEST_GOSSIP_KEYS = [Buffer.alloc(32, 0x11), Buffer.alloc(32, 0x22), Buffer.alloc(32, 0x33)] as const;

export async function startUdpTransports(count: number, options: Partial<UdpTransportOptions> = {}): Promise<UdpTransport[]> {
  const transports = Array.from({ length: count }, () => createUdpTransport({ bind: '127.0.0.1:0', ...options }));
  try {
    await Promise.all(transports.map((transport) => transport.start()));
  } catch (error) {
    await Promise.all(transports.map((transport) => transport.stop()));
    throw error;
  }
  return transports;
}

/** A 127.0.0.1 port that was free a moment ago: connecting there is refused. */
export async function freeTcpAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `127.0.0.1:${address.port}`;
}

/** Accepts TCP connections and UDP packets on one port and never answers. */
export async function startUnresponsivePeer(): Promise<UnresponsivePeer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    address: `127.0.0.1:${address.port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Binds UDP and TCP on `address` and releases both; rejects (EADDRINUSE) when either is still held. */
export async function rebind(address: string): Promise<void> {
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, resolve);
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ port, address: '127.0.0.1', exclusive: true }, resolve);
  });
  await new Promise<void>((resolve) => socket.close(() => resolve()));
}

export function udpConformanceFactory(options: Partial<UdpTransportOptions> = {}, hugeResponseBytes?: number): ConformanceFactory {
  return {
    async create(count: number): Promise<ConformanceNetwork> {
      const transports = await startUdpTransports(count, options);
      return {
        transports,
        settle: (promise) => promise,
        refusedAddress: freeTcpAddress,
        unresponsivePeer: startUnresponsivePeer,
        async cleanup() {
          await Promise.all(transports.map((transport) => transport.stop()));
        },
      };
    },
    rebind,
    ...(hugeResponseBytes === undefined ? {} : { hugeResponseBytes }),
  };
}
